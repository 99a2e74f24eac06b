// memdir ui: keyboard shortcuts for the review queue. No network, no framework.
// j/k: next/previous item; x: select it for a bulk action; a: accept; r: reject (focus the
// reason; Enter submits); e: reword (focus the new wording); Escape: back to the item.
(function () {
  "use strict";
  function items() { return Array.prototype.slice.call(document.querySelectorAll("article.item")); }
  function current() {
    var el = document.activeElement;
    return el && el.closest ? el.closest("article.item") : null;
  }
  function focusItem(item) {
    items().forEach(function (i) { i.classList.remove("current"); });
    if (item) { item.classList.add("current"); item.focus(); }
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var tag = (ev.target.tagName || "").toLowerCase();
    var typing = tag === "input" && ev.target.type !== "checkbox" || tag === "textarea" || tag === "select";
    if (typing) {
      if (ev.key === "Escape") { focusItem(current()); ev.preventDefault(); }
      return;
    }
    var all = items();
    if (!all.length) { return; }
    var item = current();
    var at = item ? all.indexOf(item) : -1;
    if (ev.key === "j" || ev.key === "k") {
      var next = ev.key === "j" ? Math.min(at + 1, all.length - 1) : Math.max(at - 1, 0);
      focusItem(all[next]);
      ev.preventDefault();
      return;
    }
    if (!item) { return; }
    if (ev.key === "x") {
      var box = item.querySelector("input[type=checkbox]");
      if (box) { box.checked = !box.checked; }
      ev.preventDefault();
    } else if (ev.key === "a") {
      var accept = item.querySelector("[data-key=a]");
      if (accept) { accept.click(); }
      ev.preventDefault();
    } else if (ev.key === "r" || ev.key === "e") {
      var field = item.querySelector("[data-key=" + ev.key + "]");
      if (field) { field.focus(); if (field.select) { field.select(); } }
      ev.preventDefault();
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    var first = items()[0];
    if (first && !location.hash) { focusItem(first); }
  });
})();
