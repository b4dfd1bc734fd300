/**
 * ISO 8601 durations of relative-time rules (`P30D`, `PT12H`, `P1Y2M`): parsed once, and turned
 * into the instant that a window of that length starts at, by this one function for every store
 * (the SQL compilation receives the instant, it does not do calendar arithmetic of its own).
 */
export interface Duration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

const DURATION =
  /^P(?:(\d{1,5})Y)?(?:(\d{1,5})M)?(?:(\d{1,5})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,7})H)?(?:(\d{1,9})M)?(?:(\d{1,10})S)?)?$/;

/** The longest window a rule may look back: ten years of 365.25 days. */
export const MAX_DURATION_DAYS = 3652.5;

/** A duration, or undefined when the text is not one, is empty or zero, or exceeds ten years. */
export function parseDuration(text: string): Duration | undefined {
  const parts = DURATION.exec(text);
  if (!parts || text.endsWith("T")) return undefined;
  const [years, months, weeks, days, hours, minutes, seconds] = parts.slice(1).map((p) => Number(p ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const length =
    years * 365.25 + months * 30.4375 + weeks * 7 + days + (hours * 3600 + minutes * 60 + seconds) / 86_400;
  if (length === 0 || length > MAX_DURATION_DAYS) return undefined;
  return { years, months, weeks, days, hours, minutes, seconds };
}

/**
 * The instant a duration before `now`: months (and years) first, on the UTC calendar, a day past
 * the end of the shorter month becoming its last day (31 March less one month is 28 or 29
 * February); then weeks, days and time as fixed lengths.
 */
export function durationBefore(now: number, duration: Duration): number {
  const at = new Date(now);
  const months = duration.years * 12 + duration.months;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, moving by zero months lands on the same day (the test only skips the calendar steps)
  if (months > 0) {
    const day = at.getUTCDate();
    at.setUTCDate(1);
    at.setUTCMonth(at.getUTCMonth() - months);
    at.setUTCDate(Math.min(day, daysIn(at.getUTCFullYear(), at.getUTCMonth())));
  }
  const seconds =
    (duration.weeks * 7 + duration.days) * 86_400 + duration.hours * 3600 + duration.minutes * 60 + duration.seconds;
  return at.getTime() - seconds * 1000;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) => (month === 1 && isLeap(year) ? 29 : (MONTH_DAYS[month] as number));
