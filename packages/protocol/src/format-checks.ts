/**
 * `format` values the calling client checks on answers (see json-schema-validator.ts). Anchored
 * expressions whose repeated parts are separated by fixed characters, so none backtracks for long.
 */
import type { Format } from 'ajv/dist/2020.js';

const dateParts = /^(\d{4})-(\d{2})-(\d{2})$/;
const time = /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/i;

function isDate(text: string): boolean {
  const match = dateParts.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= days;
}

function isDateTime(text: string): boolean {
  const [date, rest] = text.split(/t/i, 2);
  return (
    date !== undefined && rest !== undefined && isDate(date) && time.test(rest) && /(z|[+-]\d{2}:?\d{2})$/i.test(rest)
  );
}

function isUri(text: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:[^\s]*$/i.test(text)) return false;
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

export const FORMAT_CHECKS: Record<string, Format> = {
  date: isDate,
  time: (text: string) => time.test(text) && /(z|[+-]\d{2}:?\d{2})$/i.test(text),
  'date-time': isDateTime,
  email: /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/,
  uri: isUri,
  url: isUri,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  ipv4: /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
  hostname: /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i,
};
