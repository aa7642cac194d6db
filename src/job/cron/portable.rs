//! The line as the export targets read it to the same effect: Kubernetes' CronJob controller
//! (robfig/cron v3, `ParseStandard`) and GitHub Actions (which documents POSIX cron with
//! `*`, `,`, `-`, `/`, JAN-DEC and SUN-SAT, day of week 0-6).
//!
//! Three things read differently there, so a field that uses them is written out as the
//! values it stands for (a field that does not is kept as written):
//! - day of week 7 (Sunday): robfig refuses it, GitHub documents 0-6;
//! - `*` inside a list (`*,10`), and a step longer than its range (`*/100`);
//! - the day fields: robfig reads them together only when one holds a bare `*` (or `*/1`),
//!   POSIX only when one is `*`, Debian whenever one *starts* with `*`. The form written
//!   here has either one day field `*` or neither starting with `*`, which every reader
//!   takes the same way. A line whose days must match both fields while neither is every
//!   day (`0 0 */2 * 1`: odd days that are Mondays) has no such form, and is refused.

use super::field::{Field, Values};
use super::line::CronLine;

/// Why no line says the same to GitHub and Kubernetes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotPortable(String);

/// The five fields for GitHub and Kubernetes, or why there are none.
pub(crate) fn portable(line: &CronLine) -> Result<String, NotPortable> {
    let full = |f: Field, v: Values| v.bits == full_bits(f);
    let (dom_full, dow_full) = (
        full(Field::DayOfMonth, line.dom),
        full(Field::DayOfWeek, line.dow),
    );
    let (dom, dow) = if line.days_and() {
        match (dom_full, dow_full) {
            (true, _) => ("*".to_owned(), field(line, Field::DayOfWeek, true)),
            (false, true) => (field(line, Field::DayOfMonth, true), "*".to_owned()),
            (false, false) => {
                return Err(NotPortable(format!(
                    "its days must match both day fields (`{}` and `{}`, read together \
                     because one starts with `*`); GitHub Actions and Kubernetes read two \
                     restricted day fields as either one, so no line says the same there",
                    line.fields[2], line.fields[4]
                )));
            }
        }
    } else if dom_full || dow_full {
        ("*".to_owned(), "*".to_owned())
    } else {
        (
            field(line, Field::DayOfMonth, false),
            field(line, Field::DayOfWeek, false),
        )
    };
    Ok([
        field(line, Field::Minute, true),
        field(line, Field::Hour, true),
        dom,
        field(line, Field::Month, true),
        dow,
    ]
    .join(" "))
}

/// One field: as written when every target reads it the same way, else its values.
/// `star_ok`: a leading `*` (`*/15`) is fine here (never for a day field read "either").
fn field(line: &CronLine, f: Field, star_ok: bool) -> String {
    let (text, values) = match f {
        Field::Minute => (&line.fields[0], line.minute),
        Field::Hour => (&line.fields[1], line.hour),
        Field::DayOfMonth => (&line.fields[2], line.dom),
        Field::Month => (&line.fields[3], line.month),
        Field::DayOfWeek => (&line.fields[4], line.dow),
    };
    if values.bits == full_bits(f) && star_ok {
        return "*".to_owned();
    }
    if plain(f, text, star_ok) {
        return text.clone();
    }
    listed(f, values.bits)
}

/// Every value of a field (day of week: 0-6).
fn full_bits(f: Field) -> u64 {
    let (min, max) = f.bounds();
    let max = if f == Field::DayOfWeek { 6 } else { max };
    (min..=max).fold(0, |b, v| b | 1 << v)
}

/// Whether every target reads `text` as Debian's cron does: items `N`, `A-B`, `A-B/S`
/// (numbers or names, day of week 0-6), or the whole field `*` / `*/S`; no step longer
/// than the range it steps through.
fn plain(f: Field, text: &str, star_ok: bool) -> bool {
    let (min, max) = f.bounds();
    let span = max - min;
    let number_ok = |t: &str| {
        t.parse::<u32>()
            .map_or(true, |n| f != Field::DayOfWeek || n <= 6)
    };
    let step_ok = |s: Option<&str>| s.is_none_or(|s| s.parse::<u32>().is_ok_and(|s| s <= span));
    if let Some(rest) = text.strip_prefix('*') {
        return star_ok
            && (rest.is_empty() || step_ok(rest.strip_prefix('/')) && rest.starts_with('/'));
    }
    text.split(',').all(|item| {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (item, None),
        };
        !item.contains('*') && range.split('-').all(number_ok) && step_ok(step)
    })
}

/// The values as a list of numbers and ranges (`1-5,7,9`).
fn listed(f: Field, bits: u64) -> String {
    let (min, max) = f.bounds();
    let mut parts = Vec::new();
    let mut v = min;
    while v <= max {
        if bits & (1 << v) == 0 {
            v += 1;
            continue;
        }
        let start = v;
        while v < max && bits & (1 << (v + 1)) != 0 {
            v += 1;
        }
        parts.push(match v - start {
            0 => start.to_string(),
            1 => format!("{start},{v}"),
            _ => format!("{start}-{v}"),
        });
        v += 1;
    }
    parts.join(",")
}

#[cfg(test)]
#[path = "portable_tests.rs"]
mod tests;
