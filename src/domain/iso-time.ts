const DAY_MS = 86_400_000;
/** 9999-12-31T23:59:59.999Z: past it (or before 1970) toISOString writes other digits. */
const LAST_FOUR_DIGIT_MS = 253_402_300_799_999;

// The day of the last instant written, and its "YYYY-MM-DDT": a listing's instants mostly share
// their day, and writing the date is most of toISOString's cost.
let lastDay = Number.NaN;
let lastDayPrefix = "";

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * An instant in milliseconds since the epoch as `Date.prototype.toISOString` writes it
 * (2026-11-29T18:24:02.720Z), five times faster: a page of 100 members or audiences wrote 100 or
 * 200 of them, and toISOString (0.4 µs each) was the largest part of turning rows into answers.
 */
export function isoOfMs(ms: number): string {
  if (!(Number.isInteger(ms) && ms >= 0 && ms <= LAST_FOUR_DIGIT_MS)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${lastDayPrefix}${two(hours)}:${two(minutes)}:${two(seconds)}.${three(rest - seconds * 1000)}Z`;
}
