/**
 * A hono/jsx element's HTML (`String(element)`), leaving no AsyncLocalStorage entered behind.
 *
 * hono/jsx renders inside an AsyncLocalStorage of its own (for useContext across awaits). On Node
 * (20, 22) entering one turns on promise hooks for the life of the process: from then on every
 * promise and async resource of every request pays an init hook and a context copy (≈ 20 % of a
 * 4 KiB GET on the shipped bundle, issue 36). For a page rendered once at start-up from the
 * configuration, the storage is needed only during that synchronous render, so each one the render
 * enters is disabled after it; the last disabled storage turns the hooks off again. hono enters it
 * again (and so pays again) only if it renders again.
 *
 * The class is found the way hono finds it (`process.getBuiltinModule`), so this module imports no
 * Node builtin and runs unchanged where there is none, or where the class cannot disable (the
 * Worker's nodejs_compat): there it only renders.
 */
interface Storage {
  run(...args: unknown[]): unknown;
  disable(): void;
}

const storageClass = () =>
  (
    globalThis as {
      process?: { getBuiltinModule?: (id: string) => { AsyncLocalStorage?: { prototype: Storage } } | undefined };
    }
  ).process?.getBuiltinModule?.("node:async_hooks")?.AsyncLocalStorage;

export function renderDetached(element: unknown): string {
  const prototype = storageClass()?.prototype;
  const run = prototype?.run;
  const entered = new Set<Storage>();
  // Only while this synchronous render runs: nothing else can run meanwhile.
  if (prototype && run)
    prototype.run = function (this: Storage, ...args: unknown[]) {
      entered.add(this);
      return Reflect.apply(run, this, args);
    };
  try {
    const html = String(element);
    // An async component would be rendered after the storage is gone.
    if (html === "[object Promise]") throw new Error("renderDetached: an async component");
    return html;
  } finally {
    if (prototype && run) prototype.run = run;
    for (const storage of entered) {
      try {
        storage.disable();
      } catch {
        // workerd's nodejs_compat has the class but no disable(), and no promise hooks to turn off.
      }
    }
  }
}
