// Translations come from Django's JavaScriptCatalog (/jsi18n/), loaded before the modules.
export function _(text) {
  return typeof window.gettext === "function" ? window.gettext(text) : text;
}

export function ngettext(singular, plural, count) {
  if (typeof window.ngettext === "function") return window.ngettext(singular, plural, count);
  return count === 1 ? singular : plural;
}

// interpolate("%(n)s items", {n: 3}) — named placeholders, like Django's.
export function format(template, values) {
  return template.replace(/%\((\w+)\)s/g, (_m, key) => String(values[key] ?? ""));
}

export function formatNumber(value) {
  return new Intl.NumberFormat(document.documentElement.lang || undefined).format(value);
}

// Every moment the app shows is written by this one function: in the page's language and
// the reader's own time zone. "moment": a date and time; "date": the day; "full": a title's.
const STYLES = {
  moment: { dateStyle: "medium", timeStyle: "short" },
  date: { dateStyle: "medium" },
  full: { dateStyle: "full", timeStyle: "short" },
};
export function formatDate(iso, style = "moment") {
  const date = iso ? new Date(iso) : null;
  if (!date || Number.isNaN(date.getTime())) return "";
  return new Intl.DateTimeFormat(document.documentElement.lang || undefined, STYLES[style] || STYLES.moment)
    .format(date);
}

// The server writes each <time datetime="…"> with a fallback in its own zone (for a page
// without scripts); here every one of them, on the page or arriving later, is written again
// by formatDate (`data-style="date"` for a day), its title the full date and time.
export function localizeTimes(root) {
  const times = root.matches?.("time[datetime]") ? [root] : root.querySelectorAll?.("time[datetime]") || [];
  for (const time of times) {
    if (time.dataset.localized === time.dateTime) continue;
    const text = formatDate(time.dateTime, time.dataset.style);
    if (!text) continue;
    time.textContent = text;
    time.title = formatDate(time.dateTime, "full");
    time.dataset.localized = time.dateTime;
  }
}

// The monthly token budget is used up (error `budget_exceeded`): say so, and when it resets
// (`retryAfter` seconds from now; the month is UTC's).
export function budgetText(retryAfter) {
  const resets = new Date(Date.now() + (Number(retryAfter) || 0) * 1000);
  const date = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
    dateStyle: "long",
    timeZone: "UTC",
  }).format(resets);
  return format(_("You have used this month's token budget. It resets on %(date)s (UTC)."), { date });
}
