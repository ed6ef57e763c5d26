import { RequestMalformedError } from '@a2a-js/sdk/errors';

/** RFC 3339 date-time, as ProtoJSON writes a google.protobuf.Timestamp (offsets other than Z accepted). */
const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/** The stored timestamps' range (ISO text, compared as text): what lies beyond it is clamped to its ends. */
const FIRST = '0000-01-01T00:00:00.000Z';
const LAST = '9999-12-31T23:59:59.999Z';

/**
 * `statusTimestampAfter` (A2A 1.0 ListTasksRequest, a Timestamp) as the ISO instant Task rows store,
 * for an at-or-after filter: sub-millisecond digits round up, so nothing earlier than the instant is
 * included. The SDK's own check is `Date.parse`, which reads "-1" or "2024" as dates: this one refuses
 * anything but an RFC 3339 date-time naming a real day (InvalidParams).
 */
export function instantOf(text: string): string {
  const match = RFC_3339.exec(text);
  const [, year, month, day, hour, minute, second, fraction = '', offset] = match ?? [];
  const real = match !== null && realDay(Number(year), Number(month), Number(day)) && Number(hour) < 24 && Number(minute) < 60 && Number(second) < 60;
  if (!real) throw new RequestMalformedError(`statusTimestampAfter: must be an RFC 3339 date-time such as 2026-03-12T10:00:00Z (got ${JSON.stringify(text.slice(0, 40))})`);
  const roundUp = /[1-9]/.test(fraction.slice(3)) ? 1 : 0;
  const ms = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.slice(0, 3).padEnd(3, '0')}${offset.toUpperCase()}`) + roundUp;
  const iso = new Date(ms).toISOString();
  return iso.startsWith('-') ? FIRST : iso.startsWith('+') ? LAST : iso;
}

/** Whether the day exists (no 30 February); setUTCFullYear, unlike Date.UTC, takes years below 100 as they are. */
function realDay(year: number, month: number, day: number): boolean {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
