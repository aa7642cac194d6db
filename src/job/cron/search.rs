//! When a cron line fires in a time zone, daylight saving time included: Debian's cron rule,
//! which decides by the shape of the line.
//!
//! - A line with fixed times of day (neither the minute nor the hour field starts with `*`:
//!   `30 2 * * *`, `30 2,14 * * *`, `0,30 1-3 * * *`) is read on the wall clock. Each
//!   matching local time that exists runs once; one that a spring-forward skips runs at the
//!   first instant after the gap (times in the same gap share that one run); one that a
//!   fall-back repeats runs once, at its first occurrence.
//! - A line whose minute or hour field starts with `*` (`*/15 * * * *`, `0 * * * *`,
//!   `5 */2 * * *`) follows elapsed time: it runs at every instant whose local time matches,
//!   so nothing runs for a time the clock skipped, and a repeated hour runs again.
//!
//! Debian's cron (cron.c, the "time jumped" cases) and cronsim, which copies it, do the same.

use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp, ToSpan};

use super::line::{CronLine, has};

/// How far ahead a search looks. A line such as `0 0 29 2 */7` (29 February on a Sunday)
/// waits up to 28 years; cronsim gives up after 50.
const HORIZON_YEARS: i16 = 50;

/// The first instant strictly after `t` at which `line` fires in `tz`.
pub(crate) fn next_after(line: &CronLine, tz: &TimeZone, t: Timestamp) -> Option<Timestamp> {
    if line.fixed_time() {
        next_on_wall_clock(line, tz, t)
    } else {
        next_in_elapsed_time(line, tz, t)
    }
}

/// The last instant at or before `t` at which `line` fires in `tz`: look back from `t` by
/// doubling steps until the line fires in the window, then walk forward to `t`.
pub(crate) fn last_at_or_before(line: &CronLine, tz: &TimeZone, t: Timestamp) -> Option<Timestamp> {
    let mut back = SignedDuration::from_secs(60);
    let limit = SignedDuration::from_hours(24 * 366 * i64::from(HORIZON_YEARS));
    while back <= limit {
        let from = t.checked_sub(back).ok()?;
        if let Some(mut at) = next_after(line, tz, from).filter(|n| *n <= t) {
            while let Some(n) = next_after(line, tz, at).filter(|n| *n <= t) {
                at = n;
            }
            return Some(at);
        }
        back = back.saturating_mul(2);
    }
    None
}

/// Fixed times: the first matching civil time whose instant (see [`wall_instant`]) is after
/// `t`. Instants grow with civil times, so the first one past `t` is the answer; only in the
/// second pass of a fall-back do civil times at or after `t`'s resolve to before it.
fn next_on_wall_clock(line: &CronLine, tz: &TimeZone, t: Timestamp) -> Option<Timestamp> {
    let mut c = ceil_minute(tz.to_datetime(t));
    let until = years_later(c)?;
    loop {
        c = next_civil(line, c, until)?;
        let at = wall_instant(tz, c)?;
        if at > t {
            return Some(at);
        }
        c = c.checked_add(1.minute()).ok()?;
    }
}

/// The instant a fixed civil time runs at: its own; in a fall-back, the first of its two;
/// in a spring-forward gap, the end of the gap.
fn wall_instant(tz: &TimeZone, c: DateTime) -> Option<Timestamp> {
    match tz.to_ambiguous_timestamp(c).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(c).ok(),
        AmbiguousOffset::Fold { before, .. } => before.to_timestamp(c).ok(),
        AmbiguousOffset::Gap { after, .. } => {
            let inside = after.to_timestamp(c).ok()?;
            tz.following(inside).next().map(|tr| tr.timestamp())
        }
    }
}

/// Elapsed time: between two transitions the offset is fixed, so search each stretch on
/// its own civil clock, from the stretch that holds `t` onwards.
fn next_in_elapsed_time(line: &CronLine, tz: &TimeZone, t: Timestamp) -> Option<Timestamp> {
    let horizon = t.checked_add(SignedDuration::from_hours(
        24 * 366 * i64::from(HORIZON_YEARS),
    ));
    let horizon = horizon.unwrap_or(Timestamp::MAX);
    let mut from = t;
    while from < horizon {
        let offset = tz.to_offset(from);
        let end = tz.following(from).next().map(|tr| tr.timestamp());
        let mut c = ceil_minute(offset.to_datetime(from));
        if offset.to_timestamp(c).ok()? <= t {
            c = c.checked_add(1.minute()).ok()?;
        }
        let until = match end {
            Some(e) => offset.to_datetime(e),
            None => years_later(c)?,
        };
        if let Some(m) = next_civil(line, c, until) {
            let at = offset.to_timestamp(m).ok()?;
            if end.is_none_or(|e| at < e) {
                return Some(at);
            }
        }
        from = end?;
    }
    None
}

/// The first civil minute at or after `from` (a whole minute) that matches, up to `until`.
pub(crate) fn next_civil(line: &CronLine, from: DateTime, until: DateTime) -> Option<DateTime> {
    let mut date = from.date();
    let mut start = (from.hour(), from.minute());
    while date <= until.date() {
        if !has(line.month.bits, date.month()) {
            date = next_month(date)?;
            start = (0, 0);
            continue;
        }
        if line.runs_on(date)
            && let Some((h, m)) = first_time(line, start)
        {
            let found = date.at(h, m, 0, 0);
            return (found <= until).then_some(found);
        }
        date = date.tomorrow().ok()?;
        start = (0, 0);
    }
    None
}

/// The first matching time of day at or after `(hour, minute)`.
fn first_time(line: &CronLine, (hour, minute): (i8, i8)) -> Option<(i8, i8)> {
    (hour..24)
        .filter(|h| has(line.hour.bits, *h))
        .find_map(|h| {
            let from = if h == hour { minute } else { 0 };
            let rest = line.minute.bits >> from;
            (rest != 0).then(|| (h, from + rest.trailing_zeros() as i8))
        })
}

fn next_month(date: Date) -> Option<Date> {
    date.first_of_month().checked_add(1.month()).ok()
}

/// `dt` rounded up to a whole minute.
fn ceil_minute(dt: DateTime) -> DateTime {
    let floor = dt.date().at(dt.hour(), dt.minute(), 0, 0);
    if floor == dt {
        dt
    } else {
        floor.checked_add(1.minute()).unwrap_or(floor)
    }
}

/// `HORIZON_YEARS` after `c`.
fn years_later(c: DateTime) -> Option<DateTime> {
    c.checked_add(i64::from(HORIZON_YEARS).years())
        .ok()
        .or(Some(DateTime::MAX))
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
