// Keyboard review of the queue, and decisions that can be undone.
//
// A submitted decision form is not posted at once: its cards are hidden and
// a toast counts down the page's undo seconds with an Undo button; only then
// is the decision posted (htmx, so the response's queue-changed event
// refreshes the badges). Without JavaScript the forms post directly.
//
// Keys: j/k move, a approves the focused item, r opens its reject note
// (Enter there rejects), d defers, x selects, u undoes the latest waiting
// decision, ? shows the keys, Escape closes an open form.
(function () {
  const toasts = document.getElementById("decision-toasts");
  if (!toasts) return;
  const seconds = Number(toasts.dataset.undoSeconds) || 5;
  const help = document.getElementById("keys-help");
  const VERBS = { approve: "Approving", reject: "Rejecting", defer: "Deferring" };
  const waiting = [];

  function rows() { return Array.from(document.querySelectorAll("[data-row]:not([hidden])")); }
  function current() { return document.activeElement && document.activeElement.closest("[data-row]"); }
  function focusRow(row) {
    if (!row) return;
    row.focus();
    row.scrollIntoView({ block: "nearest" });
  }
  function move(step) {
    const all = rows();
    if (!all.length) return;
    const index = all.indexOf(current());
    focusRow(index < 0 ? all[0] : all[Math.min(all.length - 1, Math.max(0, index + step))]);
  }
  function cardsOf(form) {
    if (form.id !== "bulk") return [form.closest("[data-row]")];
    return Array.from(document.querySelectorAll("input[name=items]:checked"), function (box) {
      return box.closest("[data-row]");
    });
  }
  function describe(cards) {
    if (cards.length !== 1) return cards.length + " items";
    return "“" + cards[0].querySelector("h2").textContent.trim() + "”";
  }
  function later(toast, delay) { setTimeout(function () { toast.remove(); }, delay); }

  function tell(message, delay) {
    const toast = document.createElement("div");
    toast.className = "toast";
    toast.setAttribute("role", "status");
    toast.textContent = message;
    toasts.append(toast);
    later(toast, delay);
    return toast;
  }

  function schedule(form, submitter) {
    const data = new FormData(form, submitter);
    if (data.get("action") === "reject" && !String(data.get("note") || "").trim()) {
      tell("Say why when rejecting: the note is required.", 6000);
      form.querySelector("[name=note]").focus();
      return;
    }
    const cards = cardsOf(form);
    if (!cards.length) {
      tell("Select at least one item.", 6000);
      return;
    }
    const visible = rows();
    const after = visible.slice(visible.indexOf(cards[cards.length - 1]) + 1);
    const next = after.find(function (row) { return !cards.includes(row); });
    cards.forEach(function (card) { card.hidden = true; });
    const toast = document.getElementById("toast-template").content.firstElementChild.cloneNode(true);
    const text = toast.querySelector("[data-toast-text]");
    const entry = { toast: toast, cards: cards, left: seconds };
    function say() {
      text.textContent = VERBS[data.get("action")] + " " + describe(cards) + " in " + entry.left + " s.";
    }
    say();
    toast.querySelector("[data-undo]").addEventListener("click", function () { undo(entry); });
    toasts.append(toast);
    waiting.push(entry);
    entry.timer = setInterval(function () {
      entry.left -= 1;
      if (entry.left > 0) { say(); return; }
      forget(entry);
      // getAttribute: form.action would be the field named "action".
      send(entry, form.getAttribute("action"), data);
    }, 1000);
    const target = next || rows()[0];
    // Keys must not land in a field of a card that is now hidden.
    if (target) focusRow(target);
    else document.activeElement.blur();
  }

  function forget(entry) {
    clearInterval(entry.timer);
    waiting.splice(waiting.indexOf(entry), 1);
  }

  function undo(entry) {
    forget(entry);
    entry.cards.forEach(function (card) { card.hidden = false; });
    entry.toast.remove();
    tell("Undone: nothing was decided.", 4000);
    focusRow(entry.cards[0]);
  }

  function send(entry, url, data) {
    entry.toast.textContent = "Deciding…";
    htmx.ajax("POST", url, { source: entry.toast, target: entry.toast, swap: "innerHTML", values: data })
      .then(function () { settle(entry); }, function () { settle(entry); });
  }

  // The response names the items it decided: their cards go, the others
  // (refused, e.g. by the scanner) come back with the message in the toast.
  function settle(entry) {
    const outcome = entry.toast.querySelector("[data-outcome]");
    const decided = outcome ? outcome.dataset.decided.split(" ") : [];
    if (!outcome) entry.toast.textContent = "Nothing was decided: reload the page and try again.";
    entry.cards.forEach(function (card) {
      if (decided.includes(card.dataset.item)) card.remove();
      else card.hidden = false;
    });
    later(entry.toast, 8000);
    if (!document.querySelector("[data-row]") && !waiting.length) {
      htmx.ajax("GET", window.location.href, { target: "#queue-rows", swap: "innerHTML" });
    }
  }

  function closeForms() {
    const row = current();
    if (!row) return;
    row.querySelectorAll("details[open]").forEach(function (details) { details.open = false; });
    focusRow(row);
  }

  function reject(row) {
    const details = row.querySelector("[data-reject]");
    if (!details) return;
    details.open = true;
    details.querySelector("[data-reject-note]").focus();
  }

  function press(row, selector) {
    const button = row && row.querySelector(selector);
    if (button) button.form.requestSubmit(button);
  }

  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-decision]");
    if (!form) return;
    event.preventDefault();
    schedule(form, event.submitter);
  });

  window.addEventListener("beforeunload", function (event) {
    // Leaving drops what still waits: nothing is decided, so say so first.
    if (waiting.length) event.preventDefault();
  });

  document.querySelectorAll("[data-keys-help]").forEach(function (button) {
    button.addEventListener("click", function () { help.showModal(); });
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || help.open) return;
    if (event.key === "Escape") { closeForms(); return; }
    if (event.target.matches("input, textarea, select, [contenteditable]")) return;
    const row = current();
    const keys = {
      j: function () { move(1); },
      k: function () { move(-1); },
      a: function () { press(row, "[data-approve]"); },
      d: function () { press(row, "[data-defer]"); },
      r: function () { if (row) reject(row); },
      x: function () {
        const box = row && row.querySelector("input[type=checkbox]");
        if (box) box.checked = !box.checked;
      },
      u: function () { if (waiting.length) undo(waiting[waiting.length - 1]); },
      "?": function () { help.showModal(); },
    };
    if (!keys[event.key]) return;
    event.preventDefault();
    // A decision needs an item: say how to reach one rather than do nothing.
    if (!row && "adrx".includes(event.key) && rows().length) {
      tell("Move to an item first: j for the next, k for the previous.", 4000);
      return;
    }
    keys[event.key]();
  });
})();
