// Keyboard use of the review queue: j/k move between items, a approves,
// r moves to the note (a reject needs one), x toggles the bulk checkbox.
(function () {
  function rows() { return Array.from(document.querySelectorAll("[data-row]")); }
  function current() { return document.activeElement.closest("[data-row]"); }
  function move(step) {
    const all = rows();
    if (!all.length) return;
    const index = all.indexOf(current());
    const next = all[Math.min(all.length - 1, Math.max(0, index + step))] || all[0];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", function (event) {
    const typing = event.target.matches("input, textarea, select, [contenteditable]");
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    const row = current();
    if (event.key === "j") { move(1); event.preventDefault(); }
    else if (event.key === "k") { move(-1); event.preventDefault(); }
    else if (row && event.key === "a") { row.querySelector("[data-approve]").click(); event.preventDefault(); }
    else if (row && event.key === "r") { row.querySelector("[data-note]").focus(); event.preventDefault(); }
    else if (row && event.key === "x") { const box = row.querySelector("input[type=checkbox]"); box.checked = !box.checked; event.preventDefault(); }
  });
})();
