/** How sizes and dates read on the page. */

const UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB"];

export function humanBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

export const humanDate = (iso: string) => new Date(iso).toLocaleString();

/** A media type's lowercase essence (no parameters). */
export const essenceOf = (mediaType: string) => (mediaType.split(";")[0] ?? "").trim().toLowerCase();

/** A resource's name: its resourceURI after the UID. */
export const nameOf = (resource: { resourceURI: string }) =>
  resource.resourceURI.slice(resource.resourceURI.indexOf("/") + 1);
