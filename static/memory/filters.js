// Filter forms that put their query in the address (hx-push-url) show that
// query again after Back or Forward.
//
// htmx restores a page from a snapshot of its markup, which holds each field
// as the server drew it, not what was typed since: Back showed the results
// of the address with an empty search box. The address is the truth, so the
// fields are filled from it.
(function () {
  // The snapshot's copy of this script runs again on each restore, and one
  // listener is enough.
  const root = document.documentElement;
  if (root.dataset.filtersFollowAddress) return;
  root.dataset.filtersFollowAddress = "true";

  const SKIPPED = ["hidden", "submit", "button", "reset"];

  function fill(form, params) {
    Array.from(form.elements).forEach(function (field) {
      if (!field.name || SKIPPED.includes(field.type)) return;
      const values = params.getAll(field.name);
      if (field.type === "checkbox" || field.type === "radio") {
        field.checked = values.includes(field.value);
      } else if (field.multiple) {
        Array.from(field.options).forEach(function (option) {
          option.selected = values.includes(option.value);
        });
      } else {
        field.value = values.length ? values[0] : "";
      }
    });
  }

  document.addEventListener("htmx:historyRestore", function () {
    const params = new URLSearchParams(window.location.search);
    document.querySelectorAll("form[method=get][hx-push-url]").forEach(function (form) {
      fill(form, params);
    });
  });
})();
