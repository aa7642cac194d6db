//! A whole cron line: the five fields (or an `@` alias), and when a civil date and time
//! matches it.
//!
//! The day fields combine as in Debian's cron: when either of them starts with `*` (`*`,
//! `*/2`, `*,10`), a day must match both (so `0 0 */1 * 1` is Mondays only, and `*`
//! leaves the other field alone to decide); otherwise a day matching either runs (`0 0 1,15
//! * 5` is the 1st, the 15th and every Friday). A line that can never fire is refused.

use jiff::civil::Date;

use super::CronLineError;
use super::field::{self, Field, Values};

/// A parsed cron line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CronLine {
    /// The five fields as written (an alias expanded).
    pub(crate) fields: [String; 5],
    pub(crate) minute: Values,
    pub(crate) hour: Values,
    pub(crate) dom: Values,
    pub(crate) month: Values,
    /// Day of week, 0-6 (7 folded into 0).
    pub(crate) dow: Values,
}

/// The `@` aliases, as Debian's cron spells them (lower case), in five fields.
const ALIASES: [(&str, &str); 7] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

/// The five fields of `line`: its own, or its alias's.
pub(crate) fn expand(line: &str) -> Result<String, CronLineError> {
    let t = line.trim();
    if t.starts_with('@') {
        if let Some((_, five)) = ALIASES.iter().find(|(a, _)| *a == t) {
            return Ok((*five).to_owned());
        }
        let lower = t.to_ascii_lowercase();
        let why = if lower == "@reboot" {
            "runs when cron starts; `cn-run schedule` has no such moment".to_owned()
        } else if ALIASES.iter().any(|(a, _)| *a == lower) {
            format!("aliases are lower case in cron: write `{lower}`")
        } else {
            "is not a known alias".to_owned()
        };
        return Err(CronLineError::Alias {
            line: t.to_owned(),
            why,
        });
    }
    let fields: Vec<&str> = t.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(CronLineError::FieldCount {
            line: t.to_owned(),
            count: fields.len(),
        });
    }
    Ok(fields.join(" "))
}

impl CronLine {
    /// Parse a line (five fields or an alias), refusing one that can never fire.
    pub(crate) fn parse(line: &str) -> Result<CronLine, CronLineError> {
        let five = expand(line)?;
        let texts: Vec<&str> = five.split(' ').collect();
        let mut values = [Values {
            bits: 0,
            star_first: false,
        }; 5];
        for ((slot, field), text) in values.iter_mut().zip(Field::ALL).zip(&texts) {
            *slot = field::parse(field, text).map_err(|why| CronLineError::Field {
                line: line.trim().to_owned(),
                field: field.name(),
                text: (*text).to_owned(),
                why: why.0,
            })?;
        }
        let [minute, hour, dom, month, dow] = values;
        let parsed = CronLine {
            fields: owned(&texts),
            minute,
            hour,
            dom,
            month,
            dow,
        };
        if let Some(why) = parsed.never_fires() {
            return Err(CronLineError::NeverFires {
                line: line.trim().to_owned(),
                why,
            });
        }
        Ok(parsed)
    }

    /// Both day fields must match (one of them starts with `*`), rather than either.
    pub(crate) fn days_and(&self) -> bool {
        self.dom.star_first || self.dow.star_first
    }

    /// True when the line names fixed times of day: neither the minute nor the hour field
    /// starts with `*`. Such a line is read on the wall clock across DST changes; the others
    /// follow elapsed time (see `search`).
    pub(crate) fn fixed_time(&self) -> bool {
        !self.minute.star_first && !self.hour.star_first
    }

    /// Whether the line runs on `date` (month and day fields).
    pub(crate) fn runs_on(&self, date: Date) -> bool {
        if !has(self.month.bits, date.month()) {
            return false;
        }
        let dom = has(self.dom.bits, date.day());
        let dow = has(self.dow.bits, date.weekday().to_sunday_zero_offset());
        if self.days_and() {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// Why no day ever matches, if none does. With the day fields read together, a day of
    /// the month must exist in one of the months (29 February counts: it comes in leap
    /// years); read apart, the day-of-week field alone always finds days.
    fn never_fires(&self) -> Option<String> {
        if !self.days_and() {
            return None;
        }
        let possible = (1..=12u8).any(|m| {
            has(self.month.bits, m as i8) && (1..=days_in(m)).any(|d| has(self.dom.bits, d as i8))
        });
        (!possible).then(|| {
            format!(
                "no month in `{}` has a day in `{}`",
                self.fields[3], self.fields[2]
            )
        })
    }
}

/// The most days month `m` has (February: 29).
fn days_in(m: u8) -> u8 {
    match m {
        2 => 29,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Whether bit `v` is set.
pub(crate) fn has(bits: u64, v: i8) -> bool {
    u32::try_from(v).is_ok_and(|v| v < 64 && bits & (1 << v) != 0)
}

/// The five texts, owned.
fn owned(texts: &[&str]) -> [String; 5] {
    let mut out: [String; 5] = Default::default();
    for (slot, t) in out.iter_mut().zip(texts) {
        *slot = (*t).to_owned();
    }
    out
}
