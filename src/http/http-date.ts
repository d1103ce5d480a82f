/** HTTP-date (RFC 9110 §5.6.7): the three forms parsed exactly, IMF-fixdate written. */

const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * Parses the three HTTP-date forms exactly (not `Date.parse`, whose leniency differs between
 * engines); anything else is `undefined`, which callers treat as "field absent" as §13.1 requires.
 */
export function parseHttpDate(value: string | null | undefined): Date | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  let m: RegExpExecArray | null;
  if ((m = IMF_FIXDATE.exec(text))) return build(m[3], m[2], m[1], m[4], m[5], m[6]);
  if ((m = RFC850_DATE.exec(text))) {
    // §5.6.7: a two-digit year more than 50 years in the future belongs to the previous century.
    const now = new Date().getUTCFullYear();
    let year = now - (now % 100) + Number(m[3]);
    if (year > now + 50) year -= 100;
    return build(String(year), m[2], m[1], m[4], m[5], m[6]);
  }
  if ((m = ASCTIME_DATE.exec(text))) return build(m[6], m[1], m[2], m[3], m[4], m[5]);
  return undefined;
}

function build(...fields: (string | undefined)[]): Date | undefined {
  const [year, monthName, day, hour, minute, second] = fields;
  const [y, d, h, min, sec] = [year, day, hour, minute, second].map(Number);
  const month = MONTHS.indexOf(monthName ?? "");
  if (y === undefined || d === undefined || h === undefined || min === undefined || sec === undefined) return undefined;
  if (month < 0 || d < 1 || h > 23 || min > 59 || sec > 60) return undefined; // 60: leap second
  const date = new Date(0);
  date.setUTCFullYear(y, month, d); // not Date.UTC: it maps years 0–99 to 19xx
  if (date.getUTCDate() !== d) return undefined; // e.g. 31 Feb rolled over
  date.setUTCHours(h, min, sec);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT` (ECMAScript specifies `toUTCString` as exactly this). */
export const formatHttpDate = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000).toUTCString();
