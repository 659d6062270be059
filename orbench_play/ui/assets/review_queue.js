// The review queue's panel (the `review_panel` component's js_on_load): keyboard first.
// While the panel has the focus, one key per decision: A answer, R refusal, I indirect
// refusal, S skip (shown on screen); Escape closes it and gives the focus back to the
// "Review N unsure" control. Each decision is sent as the panel's `decide` event; the
// server answers with the next answer, which takes the focus again.
const KEYS = { a: "direct_answer", r: "direct_refusal", i: "indirect_refusal", s: "skip" };
const panel = () => element.querySelector(".rq");

function decide(label) {
  const box = panel();
  if (!box || !box.dataset.cell || box.dataset.busy) return;
  box.dataset.busy = "1"; // one decision per answer shown: a double key press decides once
  trigger("decide", { cell: box.dataset.cell, label });
}

function close() {
  const box = panel();
  if (box) box.remove();
  trigger("close_review", {});
  const control = document.querySelector("#review");
  if (control) (control.matches("button") ? control : control.querySelector("button") || control).focus();
}

element.addEventListener("keydown", (event) => {
  if (!panel() || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "Escape") {
    event.preventDefault();
    close();
    return;
  }
  const label = KEYS[(event.key || "").toLowerCase()];
  if (label && panel().dataset.cell) {
    event.preventDefault();
    decide(label);
  }
});

element.addEventListener("click", (event) => {
  const choice = event.target.closest && event.target.closest("button.rq-do");
  if (choice) {
    decide(choice.dataset.label);
    return;
  }
  if (event.target.closest && event.target.closest("button.rq-close")) close();
});

watch("value", () => {
  const box = panel();
  if (box) box.focus();
});
