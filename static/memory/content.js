// Rendered Markdown or its source: a click flips every content block on the
// page in place and the choice is kept for later pages (localStorage). The
// links still work without this script: they reload with ?content=.
(function () {
  const KEY = "memory.content-view";
  function show(root, mode) {
    root.querySelectorAll("[data-content-pane]").forEach(function (pane) {
      pane.hidden = pane.dataset.contentPane !== mode;
    });
    root.querySelectorAll("[data-content-mode]").forEach(function (link) {
      if (link.dataset.contentMode === mode) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    });
  }
  function stored() {
    try { return localStorage.getItem(KEY); } catch (error) { return null; }
  }
  function applyTo(scope) {
    const mode = stored();
    if (mode !== "rendered" && mode !== "source") return;
    // A preview loaded on opening is itself the block htmx announces.
    if (scope.matches && scope.matches("[data-content]")) show(scope, mode);
    scope.querySelectorAll("[data-content]").forEach(function (root) { show(root, mode); });
  }
  document.addEventListener("click", function (event) {
    const link = event.target.closest("[data-content-mode]");
    if (!link) return;
    event.preventDefault();
    const mode = link.dataset.contentMode;
    try { localStorage.setItem(KEY, mode); } catch (error) { /* private mode: this page only */ }
    document.querySelectorAll("[data-content]").forEach(function (root) { show(root, mode); });
  });
  // htmx swaps in new cards and previews (a decision, a layout change, a
  // preview opened): keep them in step.
  document.addEventListener("htmx:load", function (event) { applyTo(event.target); });
  applyTo(document);
})();
