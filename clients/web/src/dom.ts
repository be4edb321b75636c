// Two tiny element builders: the app draws with plain DOM and SVG, no framework.

type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;
type Child = Node | string | undefined | false;

function fill<T extends Element>(element: T, attrs: Attrs, children: Child[]): T {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** An HTML element: h("button", { onclick: go }, "Go"). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  return fill(document.createElementNS("http://www.w3.org/2000/svg", tag), attrs, children);
}

/** Replace everything inside `parent`. */
export function mount(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(...children.filter((c): c is Node | string => c !== undefined && c !== false));
}
