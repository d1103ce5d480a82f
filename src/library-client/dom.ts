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

/**
 * Where an error shows: in the open dialog that caused it (its own alert), else the page's #cms-error
 * alert. Both are live regions, so screen readers announce it; one behind a modal dialog would be
 * neither seen nor reachable.
 */
const errorRegion = () => document.querySelector<HTMLElement>("dialog[open] .dialog-error") ?? byId("cms-error");

export function showError(message: string) {
  errorRegion().textContent = message;
}

export function clearError() {
  for (const region of document.querySelectorAll<HTMLElement>("#cms-error, .dialog-error")) region.textContent = "";
}
