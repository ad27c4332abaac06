// Character counters for memory forms: every field with data-limit has a
// "<n> / <limit> characters" line (rendered by the server with the count
// at load), updated as the person types and marked once over the limit.
// The limit is the server's own (MEMORY_MAX_CONTENT_CHARS); characters are
// counted as Python counts them (code points, one per line break).
(function () {
  "use strict";

  function update(field) {
    const count = document.querySelector('[data-count-for="' + field.id + '"]');
    if (!count) {
      return;
    }
    const length = Array.from(field.value).length;
    const over = length > Number(field.dataset.limit);
    count.textContent = String(length);
    count.parentElement.classList.toggle("over", over);
    field.setCustomValidity(over ? "Over the limit of " + field.dataset.limit + " characters." : "");
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("[data-limit]")) {
      update(event.target);
    }
  });
  document.querySelectorAll("[data-limit]").forEach(update);
})();
