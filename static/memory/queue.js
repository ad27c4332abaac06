// Keyboard review of the queue, and decisions that can be undone.
//
// A submitted decision form is not posted at once: its cards are hidden and
// a toast counts down the page's undo seconds with an Undo button; only then
// is the decision posted (htmx, so the response's queue-changed event
// refreshes the badges). Without JavaScript the forms post directly.
// Back or Forward in the queue posts every decision still waiting at once
// (see htmx:historyCacheMiss below).
//
// Keys: j/k move, a approves the focused item, r opens its reject note
// (Enter there rejects), d defers, x selects, u undoes the latest waiting
// decision, ? shows the keys, Escape closes an open form.
(function () {
  // Back to an address the queue pushed (a page, a diff layout) has htmx
  // draw the page again, and this script with it: one set of listeners is
  // enough, and they look up the page's elements when they need them.
  const root = document.documentElement;
  if (!document.getElementById("decision-toasts") || root.dataset.queueKeys) return;
  root.dataset.queueKeys = "true";

  const VERBS = { approve: "Approving", reject: "Rejecting", defer: "Deferring" };
  // Inputs that take no text: on them a letter is a shortcut, as on a card.
  const NOT_TEXT = ["checkbox", "radio", "button", "submit", "reset", "image", "file", "range", "color"];
  const waiting = [];
  // Decisions posted and not answered yet: a page drawn again waits for them.
  const posting = new Set();
  // The decisions sent at once for Back or Forward, reported in the page
  // drawn again.
  let sentAtOnce = null;
  // The browser refuses keepalive requests beyond 64 KiB in all.
  const KEEPALIVE_BYTES = 65536;
  // Where the focus goes once the rows are swapped (see landingFor).
  let landing = null;

  function toasts() { return document.getElementById("decision-toasts"); }
  function help() { return document.getElementById("keys-help"); }
  function rows() { return Array.from(document.querySelectorAll("[data-row]:not([hidden])")); }
  function current() { return document.activeElement && document.activeElement.closest("[data-row]"); }
  function typing(element) {
    if (!element || !element.matches) return false;
    if (element.isContentEditable || element.matches("textarea, select")) return true;
    return element.matches("input") && !NOT_TEXT.includes(element.type);
  }
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
    // Only the ticks the reviewer sees: a card is hidden while its own
    // decision waits or is on its way, and a bulk decision would decide its
    // item as well, even once that decision is undone.
    return rows().filter(function (row) {
      const box = row.querySelector("input[name=items]");
      return box && box.checked;
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
    toasts().append(toast);
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
    // The form's data holds every ticked box, hidden cards' too.
    if (form.id === "bulk") {
      data.delete("items");
      cards.forEach(function (card) { data.append("items", card.dataset.item); });
    }
    const visible = rows();
    const after = visible.slice(visible.indexOf(cards[cards.length - 1]) + 1);
    const next = after.find(function (row) { return !cards.includes(row); });
    cards.forEach(function (card) { card.hidden = true; });
    const toast = document.getElementById("toast-template").content.firstElementChild.cloneNode(true);
    const text = toast.querySelector("[data-toast-text]");
    const entry = { toast: toast, cards: cards, left: Number(toasts().dataset.undoSeconds) || 5, form: form, data: data };
    function say() {
      text.textContent = VERBS[data.get("action")] + " " + describe(cards) + " in " + entry.left + " s.";
    }
    say();
    toast.querySelector("[data-undo]").addEventListener("click", function () { undo(entry); });
    toasts().append(toast);
    waiting.push(entry);
    // The bulk form starts empty for the next decision: its note and ticks
    // would otherwise go with it unseen. Undo puts them back.
    if (form.id === "bulk") {
      form.querySelector("[name=note]").value = "";
      cards.forEach(function (card) { card.querySelector("input[name=items]").checked = false; });
    }
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

  // A bulk decision not made (undone, or refused for all its items) gets its
  // note and ticks back, unless a new note was typed meanwhile.
  function refill(entry, cards) {
    if (entry.form.id !== "bulk") return;
    const note = entry.form.querySelector("[name=note]");
    if (!note.value) note.value = entry.data.get("note") || "";
    cards.forEach(function (card) { card.querySelector("input[name=items]").checked = true; });
  }

  function undo(entry) {
    forget(entry);
    entry.cards.forEach(function (card) { card.hidden = false; });
    refill(entry, entry.cards);
    entry.toast.remove();
    tell("Undone: nothing was decided.", 4000);
    focusRow(entry.cards[0]);
  }

  // `answer` must not reject: a page drawn again waits for all of them.
  function track(answer) {
    posting.add(answer);
    function done() { posting.delete(answer); }
    answer.then(done, done);
    return answer;
  }

  function send(entry, url, data) {
    entry.toast.textContent = "Deciding…";
    track(htmx.ajax("POST", url, { source: entry.toast, target: entry.toast, swap: "innerHTML", values: data })
      .then(function () { settle(entry); }, function () { settle(entry); }));
  }

  // Cards the server decided go; the others come back. Returns those.
  function sortOut(cards, decided) {
    const back = cards.filter(function (card) { return !decided.includes(card.dataset.item); });
    cards.forEach(function (card) {
      if (back.includes(card)) card.hidden = false;
      else card.remove();
    });
    return back;
  }

  // The response names the items it decided: their cards go. The others
  // (refused, e.g. by the scanner) come back, and the toast naming them
  // stays until dismissed: it arrives when the reviewer is on another card.
  function settle(entry) {
    const outcome = entry.toast.querySelector("[data-outcome]");
    const decided = outcome ? outcome.dataset.decided.split(" ") : [];
    if (!outcome) entry.toast.textContent = "Nothing was decided: reload the page and try again.";
    const back = sortOut(entry.cards, decided);
    if (back.length === entry.cards.length) refill(entry, back);
    if (back.length) {
      hold(entry.toast, back[0]);
      reveal(back[0]);
    } else {
      later(entry.toast, 8000);
    }
    if (!document.querySelector("[data-row]") && !waiting.length) {
      htmx.ajax("GET", window.location.href, { target: "#queue-rows", swap: "innerHTML" });
    }
  }

  function hold(toast, card) {
    toast.setAttribute("role", "alert");
    const dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.textContent = "Dismiss";
    dismiss.addEventListener("click", function () {
      const hadFocus = toast.contains(document.activeElement);
      toast.remove();
      if (hadFocus) focusRow(card.isConnected ? card : rows()[0]);
    });
    toast.append(" ", dismiss);
  }

  // A card that came back: open again with what the reviewer edited, and
  // in view with the focus, unless the reviewer is typing somewhere else.
  function reveal(card) {
    const box = card.querySelector("textarea[name=content]");
    const edited = box && box.value !== box.defaultValue;
    if (edited) box.closest("details").open = true;
    if (typing(document.activeElement) && !card.contains(document.activeElement)) return;
    card.focus({ preventScroll: true });
    (edited ? box : card).scrollIntoView({ block: "center" });
  }

  // A swap of the rows replaces the link that had the focus. After paging
  // the reviewer lands on the new page's first card; after a diff layout
  // change, on the same card, where it was on the screen.
  function landingFor(link) {
    if (link.closest(".pager")) return { first: true };
    const card = link.closest("[data-row]");
    return card ? { id: card.id, top: card.getBoundingClientRect().top } : null;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    const target = event.detail.target;
    if (target && target.id === "queue-rows") landing = landingFor(event.detail.elt);
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    const target = event.detail.target;
    if (!landing || !target || target.id !== "queue-rows") return;
    const spot = landing;
    landing = null;
    if (spot.first) {
      const first = rows()[0];
      if (!first) return;
      first.focus({ preventScroll: true });
      first.scrollIntoView({ block: "start" });
      return;
    }
    const card = document.getElementById(spot.id);
    if (!card) return;
    card.focus({ preventScroll: true });
    window.scrollBy(0, card.getBoundingClientRect().top - spot.top);
  });

  // Back or Forward to an address the pager pushed has htmx draw the whole
  // page again from the server, with no beforeunload: a countdown still
  // running would then fire for a toast gone with its page, and htmx posts
  // nothing for it. The reviewer decided those items, so they are posted at
  // once, and the page's request waits until every decision on its way is
  // answered (htmx sends it only if this event is not cancelled): the
  // server draws the page with them made. Fetching the rows again once it
  // is drawn would first show them pending, to be decided twice.
  document.addEventListener("htmx:historyCacheMiss", function (event) {
    if (waiting.length) sentAtOnce = (sentAtOnce || []).concat(postAll(waiting.slice()));
    if (!posting.size) return;
    event.preventDefault();
    const request = event.detail.xhr;
    const path = event.detail.path;
    Promise.all(Array.from(posting)).then(function () {
      // A later Back or Forward asked for its own page: this older one
      // would be drawn over it.
      if (path === window.location.pathname + window.location.search) request.send();
    });
  });

  // With keepalive the posts outlive the page should the reviewer close it
  // at once; past the browser's allowance a keepalive post is refused, so
  // the rest go without.
  function postAll(entries) {
    let allowance = KEEPALIVE_BYTES;
    return entries.map(function (entry) {
      forget(entry);
      const body = new URLSearchParams(entry.data);
      const size = body.toString().length;
      const keepalive = size <= allowance;
      if (keepalive) allowance -= size;
      return track(fetch(entry.form.getAttribute("action"), {
        method: "POST",
        body: body,
        credentials: "same-origin",
        keepalive: keepalive,
        // Answered as htmx is, with the outcome: a plain post is redirected,
        // and its messages kept for whichever page comes next.
        headers: { "HX-Request": "true" },
      }).then(function (response) {
        return response.ok ? response.text() : "";
      }).then(function (html) {
        return { entry: entry, outcome: outcomeIn(html) };
      }, function () {
        return { entry: entry, outcome: null };
      }));
    });
  }

  // Read in a template, where nothing of it runs or loads.
  function outcomeIn(html) {
    const holder = document.createElement("template");
    holder.innerHTML = html;
    return holder.content.querySelector("[data-outcome]");
  }

  function reportSent() {
    if (!sentAtOnce) return;
    const sent = sentAtOnce;
    sentAtOnce = null;
    Promise.all(sent).then(tellSent);
  }
  document.addEventListener("htmx:historyRestore", reportSent);
  // A page that could not be drawn again stays, with the cards and toasts
  // of these decisions: the report sorts them out (elsewhere they are gone).
  document.addEventListener("htmx:historyCacheMissLoadError", reportSent);

  // In the page's messages, which stay: the toasts of these decisions went
  // with the page they were in.
  function note(text, className) {
    const message = document.createElement("li");
    message.className = className;
    message.textContent = text;
    document.getElementById("messages").append(message);
  }

  function tellSent(results) {
    note(results.length + " waiting decision(s) sent at once on going back or forward.", "message info");
    results.forEach(function (result) {
      const entry = result.entry;
      entry.toast.remove();
      if (!result.outcome) {
        sortOut(entry.cards, []);
        note("Nothing was decided for " + describe(entry.cards) + ": decide again.", "message error");
        return;
      }
      sortOut(entry.cards, result.outcome.dataset.decided.split(" "));
      result.outcome.querySelectorAll(".message").forEach(function (message) {
        note(message.textContent, message.className);
      });
    });
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

  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-keys-help]")) help().showModal();
  });

  document.addEventListener("keydown", function (event) {
    const dialog = help();
    if (!dialog || event.ctrlKey || event.metaKey || event.altKey || dialog.open) return;
    if (event.key === "Escape") { closeForms(); return; }
    // Letters typed into a field are text; on a checkbox or a button they
    // are shortcuts, as on the card itself.
    if (typing(event.target)) return;
    const row = current();
    const keys = {
      j: function () { move(1); },
      k: function () { move(-1); },
      a: function () { press(row, "[data-approve]"); },
      d: function () { press(row, "[data-defer]"); },
      r: function () { if (row) reject(row); },
      x: function () {
        const box = row && row.querySelector("input[name=items]");
        if (box) box.checked = !box.checked;
      },
      u: function () { if (waiting.length) undo(waiting[waiting.length - 1]); },
      "?": function () { dialog.showModal(); },
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
