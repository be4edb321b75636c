// The high-contrast option (access): a toggle in the header, remembered in this browser
// (localStorage "tafel.contrast"). index.html applies a remembered choice before the first paint;
// this wires the button. The styles are `html.high-contrast` rules in the CSS.
import { t } from "./i18n.js";

const STORE = "tafel.contrast";

function set(on: boolean, button: HTMLElement): void {
  document.documentElement.classList.toggle("high-contrast", on);
  button.setAttribute("aria-pressed", String(on));
  try {
    if (on) localStorage.setItem(STORE, "high");
    else localStorage.removeItem(STORE);
  } catch {
    // storage refused (privacy settings): the choice holds for this page only
  }
}

export function contrastToggle(): void {
  const button = document.getElementById("contrast");
  if (button === null) return;
  const label = t("board:highContrast");
  button.setAttribute("aria-label", label);
  button.title = label;
  button.setAttribute("aria-pressed", String(document.documentElement.classList.contains("high-contrast")));
  button.addEventListener("click", () => set(!document.documentElement.classList.contains("high-contrast"), button));
}

contrastToggle();
