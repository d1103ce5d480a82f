/**
 * `target` with some of its members replaced: `overrides` answers for the names it has, the target
 * for the rest (its methods bound to it, so private fields keep working). How the database wiring
 * wraps a libSQL client without re-implementing its interface. Web APIs only.
 */
export function proxyWith<T extends object>(target: T, overrides: Partial<Record<PropertyKey, unknown>>): T {
  return new Proxy(target, {
    get(object, prop, receiver) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop];
      const value = Reflect.get(object, prop, receiver);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}
