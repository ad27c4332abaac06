// Keyboard focus survives an htmx swap. A swap replaces the region it
// targets, and with it the control the person was on: focus fell to the
// page's body and a keyboard or screen reader user started again from the
// top. htmx itself focuses an element with the same id again; this finds
// the others in the new region: the diff layout button of the same kind,
// the link to the same address, or else the region's landing heading.
(function () {
  // A page htmx draws again for Back runs this script again: one set of
  // listeners is enough.
  const root = document.documentElement;
  if (root.dataset.keepFocus) return;
  root.dataset.keepFocus = "true";

  let kept = null;

  function keyOf(element) {
    if (element.id) return "#" + CSS.escape(element.id);
    if (element.dataset.diffLayout) {
      return '[data-diff-layout="' + CSS.escape(element.dataset.diffLayout) + '"]';
    }
    if (element.matches("a[href]")) return 'a[href="' + CSS.escape(element.getAttribute("href")) + '"]';
    return null;
  }

  function lost(element) {
    return !element || element === document.body || !document.body.contains(element);
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    const target = event.detail.target;
    const focused = document.activeElement;
    kept = target && !lost(focused) && target.contains(focused) ? { target: target, key: keyOf(focused) } : null;
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (!kept || event.detail.target !== kept.target) return;
    const spot = kept;
    kept = null;
    if (!lost(document.activeElement)) return;
    const again = (spot.key && spot.target.querySelector(spot.key)) || spot.target.querySelector("[data-focus-landing]");
    if (again) again.focus({ preventScroll: true });
  });
})();
