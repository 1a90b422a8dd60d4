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

export function formatDate(iso) {
  if (!iso) return "";
  return new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
    dateStyle: "short",
    timeStyle: "short",
  }).format(new Date(iso));
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
