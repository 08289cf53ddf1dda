/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week, UTC) as scheduled ingest
 * rules use them: numbers, `*`, ranges `a-b`, steps `*\/n` and `a-b/n`, and lists. As in Vixie cron,
 * when both day fields are restricted a day matching either runs. Names (`MON`, `JAN`) and the
 * non-standard `@hourly` forms are not accepted.
 */

interface CronFields {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly days: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly weekdays: ReadonlySet<number>;
  readonly anyDay: boolean;
  readonly anyWeekday: boolean;
}

const RANGES: readonly [string, number, number][] = [
  ["minute", 0, 59],
  ["hour", 0, 23],
  ["day of month", 1, 31],
  ["month", 1, 12],
  ["day of week", 0, 7],
];

export class CronSyntaxError extends Error {
  override name = "CronSyntaxError";
}

export function parseCron(expression: string): CronFields {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5)
    throw new CronSyntaxError(`has ${parts.length} fields, not 5 (minute hour day month weekday)`);
  const sets = parts.map((part, i) => parseField(part, ...RANGES[i]!));
  const weekdays = new Set([...sets[4]!].map((d) => d % 7));
  return {
    minutes: sets[0]!,
    hours: sets[1]!,
    days: sets[2]!,
    months: sets[3]!,
    weekdays,
    anyDay: parts[2] === "*",
    anyWeekday: parts[4] === "*",
  };
}

function parseField(text: string, name: string, min: number, max: number): Set<number> {
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
    if (!match) throw new CronSyntaxError(`${name} field "${text}" is not a number, range, step or list`);
    const from = match[1] === "*" ? min : Number(match[2]);
    const to = match[1] === "*" ? max : match[3] !== undefined ? Number(match[3]) : match[4] ? max : from;
    const step = match[4] ? Number(match[4]) : 1;
    if (from < min || to > max || from > to || step < 1)
      throw new CronSyntaxError(`${name} field "${text}" is outside ${min}-${max}`);
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}

/** The first minute strictly after `after` (epoch ms) that the expression matches, in UTC. */
export function nextCronTime(expression: string, after: number): number {
  const fields = parseCron(expression);
  const time = new Date(Math.floor(after / 60_000) * 60_000 + 60_000);
  // Four years of minutes bound the search (29 February included); a valid expression matches sooner.
  for (let i = 0; i < 4 * 366 * 24 * 60; i++) {
    if (!fields.months.has(time.getUTCMonth() + 1)) {
      time.setUTCMonth(time.getUTCMonth() + 1, 1);
      time.setUTCHours(0, 0, 0, 0);
      continue;
    }
    const dayOk = fields.days.has(time.getUTCDate());
    const weekdayOk = fields.weekdays.has(time.getUTCDay());
    const day = fields.anyDay || fields.anyWeekday ? dayOk && weekdayOk : dayOk || weekdayOk;
    if (!day) {
      time.setUTCDate(time.getUTCDate() + 1);
      time.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!fields.hours.has(time.getUTCHours())) {
      time.setUTCHours(time.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (fields.minutes.has(time.getUTCMinutes())) return time.getTime();
    time.setUTCMinutes(time.getUTCMinutes() + 1, 0, 0);
  }
  throw new CronSyntaxError(`never matches a date`);
}
