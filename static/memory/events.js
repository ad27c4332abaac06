// The events page: the event stream says when something happened, and htmx
// fetches the new rows (rendered and escaped by the server, with the page's
// filter). EventSource reconnects by itself and resumes with Last-Event-ID.
(function () {
  const table = document.querySelector("[data-event-stream]");
  if (!table || !window.EventSource) return;
  const source = new EventSource(table.dataset.eventStream);
  let timer = null;
  source.onmessage = function () {
    // A burst of events is one fetch.
    if (timer) return;
    timer = setTimeout(function () {
      timer = null;
      document.body.dispatchEvent(new Event("memory-event"));
    }, 300);
  };
})();
