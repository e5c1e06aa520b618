(function () {
  "use strict";
  const main = document.querySelector("main");
  function highlight(name) {
    main.classList.toggle("dimmed", name !== null);
    document.querySelectorAll("[data-run]").forEach((e) => e.classList.toggle("hl", e.dataset.run === name));
  }
  document.querySelectorAll(".legend [data-run], tr.run").forEach((e) => {
    e.addEventListener("mouseenter", () => highlight(e.dataset.run));
    e.addEventListener("mouseleave", () => highlight(null));
  });
})();
