/** Small DOM helpers: the page's elements by id, and element building without innerHTML (names are user data). */

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

type Attributes = Record<string, string | boolean | undefined>;

/** An element with attributes (false/undefined left out) and text or element children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) element.setAttribute(name, "");
    else if (typeof value === "string") element.setAttribute(name, value);
  }
  element.append(...children);
  return element;
}

/** The #cms-error alert: shown to everyone, announced to screen readers. */
export function showError(message: string) {
  byId("cms-error").textContent = message;
}

export function clearError() {
  byId("cms-error").textContent = "";
}
