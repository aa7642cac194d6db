//! One field of a cron line, read the way Debian's cron (Vixie cron 3.0) reads it: a
//! comma-separated list whose items are `*`, a number or name, or a range `A-B`, either of
//! the last with an optional step (`*/15`, `1-31/2`). Names (`JAN`, `MON`, any case, three
//! letters) belong to the month and day-of-week fields only; day of week 7 is Sunday, like 0.
//!
//! Where Debian's parser is lenient in ways that hide mistakes, this one refuses with the
//! reason instead: it skips whatever follows a valid item (`*-5`, `5#2` read as `5`), and
//! reads a backwards range (`5-1`, `SAT-SUN`) as no value at all. The extensions of other
//! dialects (`L`, `W`, `#`, `?`, `+`) are refused by name: neither Debian's cron nor the
//! export targets (GitHub Actions, Kubernetes) take all of them.

/// Which of the five fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl Field {
    pub(crate) const ALL: [Field; 5] = [
        Field::Minute,
        Field::Hour,
        Field::DayOfMonth,
        Field::Month,
        Field::DayOfWeek,
    ];

    /// The field's name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Field::Minute => "minute",
            Field::Hour => "hour",
            Field::DayOfMonth => "day-of-month",
            Field::Month => "month",
            Field::DayOfWeek => "day-of-week",
        }
    }

    /// The smallest and largest value (day of week: 0 and 7 are both Sunday).
    pub(crate) fn bounds(self) -> (u32, u32) {
        match self {
            Field::Minute => (0, 59),
            Field::Hour => (0, 23),
            Field::DayOfMonth => (1, 31),
            Field::Month => (1, 12),
            Field::DayOfWeek => (0, 7),
        }
    }

    /// What the field takes, for messages.
    fn takes(self) -> &'static str {
        match self {
            Field::Minute => "minutes are 0-59",
            Field::Hour => "hours are 0-23",
            Field::DayOfMonth => "days of the month are 1-31",
            Field::Month => "months are 1-12 or JAN-DEC",
            Field::DayOfWeek => "days of the week are 0-7 (0 and 7 are Sunday) or SUN-SAT",
        }
    }

    /// The value a name stands for in this field.
    fn name_value(self, word: &str) -> Option<u32> {
        let upper = word.to_ascii_uppercase();
        let find = |names: &[&str], first: u32| {
            names
                .iter()
                .position(|n| *n == upper)
                .and_then(|i| u32::try_from(i).ok())
                .map(|i| i + first)
        };
        match self {
            Field::Month => find(&MONTHS, 1),
            Field::DayOfWeek => find(&DAYS, 0),
            _ => None,
        }
    }
}

/// Why a field's text is refused, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct FieldError(pub(crate) String);

fn refuse<T>(why: String) -> Result<T, FieldError> {
    Err(FieldError(why))
}

/// A parsed field: one bit per value, and whether its text starts with `*` (what decides
/// how the two day fields combine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Values {
    pub(crate) bits: u64,
    pub(crate) star_first: bool,
}

/// Parse a field's text; the error says why, in words.
pub(crate) fn parse(field: Field, text: &str) -> Result<Values, FieldError> {
    let mut bits = 0u64;
    for item in text.split(',') {
        bits |= parse_item(field, item)?;
    }
    if field == Field::DayOfWeek && bits & (1 << 7) != 0 {
        bits = (bits & !(1 << 7)) | 1;
    }
    Ok(Values {
        bits,
        star_first: text.starts_with('*'),
    })
}

/// The bits of one list item.
fn parse_item(field: Field, item: &str) -> Result<u64, FieldError> {
    if item.is_empty() {
        return refuse("an empty list item (a comma with nothing on one side)".to_owned());
    }
    if let Some(why) = extension(item) {
        return refuse(why);
    }
    let (min, max) = field.bounds();
    let (range, step) = match item.split_once('/') {
        Some((range, step)) => (range, Some(step)),
        None => (item, None),
    };
    let (low, high) = if range == "*" {
        (min, max)
    } else if let Some((a, b)) = range.split_once('-') {
        if a == "*" || b == "*" || b.contains('-') {
            return refuse(format!(
                "`{item}`: a range is two values around one `-`, as in `1-5`; `*` stands alone"
            ));
        }
        let (low, high) = (value(field, a, item)?, value(field, b, item)?);
        if low > high {
            return refuse(backwards(field, a, b, low, high));
        }
        (low, high)
    } else {
        let v = value(field, range, item)?;
        if step.is_some() {
            return refuse(format!(
                "`{item}`: a step needs a range before it, as in `{range}-{max}/…` or `*/…` \
                 (Debian's cron refuses `{item}`)"
            ));
        }
        (v, v)
    };
    let step = match step {
        Some(s) => step_of(s, item)?,
        None => 1,
    };
    let mut bits = 0u64;
    let mut v = u64::from(low);
    while v <= u64::from(high) {
        bits |= 1 << v;
        v = v.saturating_add(step);
    }
    Ok(bits)
}

/// A step: digits, more than zero. A step longer than the range keeps its first value.
fn step_of(text: &str, item: &str) -> Result<u64, FieldError> {
    if text.is_empty() {
        return refuse(format!("`{item}` is missing its step after `/`"));
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return refuse(format!(
            "`{item}`: the step after `/` must be a number, not `{text}`"
        ));
    }
    let step = text.bytes().fold(0u64, |n, b| {
        n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    });
    if step == 0 {
        return refuse(format!("`{item}`: a step of 0 never moves on"));
    }
    Ok(step)
}

/// A number or a name of this field.
fn value(field: Field, text: &str, item: &str) -> Result<u32, FieldError> {
    let (min, max) = field.bounds();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let n = text.trim_start_matches('0').parse::<u32>().unwrap_or(0);
        let too_long = text.trim_start_matches('0').len() > 9;
        if too_long || n < min || n > max {
            return refuse(format!("{text} is out of range; {}", field.takes()));
        }
        return Ok(n);
    }
    if let Some(v) = field.name_value(text) {
        return Ok(v);
    }
    refuse(not_a_value(field, text, item))
}

/// Why `text` is not a value of `field`: a name of the other named field, or not a value.
fn not_a_value(field: Field, text: &str, item: &str) -> String {
    let elsewhere = [Field::Month, Field::DayOfWeek]
        .into_iter()
        .find(|f| *f != field && f.name_value(text).is_some());
    match elsewhere {
        Some(Field::DayOfWeek) => format!("`{text}` is a day of the week; {}", field.takes()),
        Some(_) => format!("`{text}` is a month; {}", field.takes()),
        None if text.is_empty() => {
            format!("`{item}` is missing a value; {}", field.takes())
        }
        None => format!(
            "`{text}` is not a value (names are three letters); {}",
            field.takes()
        ),
    }
}

/// The message for a range that runs backwards, with the two ranges it probably meant.
fn backwards(field: Field, a: &str, b: &str, low: u32, high: u32) -> String {
    let (min, max) = field.bounds();
    let max = if field == Field::DayOfWeek { 6 } else { max };
    let part = |x: u32, y: u32| {
        if x == y {
            x.to_string()
        } else {
            format!("{x}-{y}")
        }
    };
    let hint = if low > max {
        part(min, high)
    } else {
        format!("{},{}", part(low, max), part(min, high))
    };
    format!(
        "the range {a}-{b} runs backwards ({low} to {high}); Debian's cron reads it as no \
         value at all. For a range that wraps around, write `{hint}`"
    )
}

/// The reason an item written in another cron dialect is refused, if it is one.
fn extension(item: &str) -> Option<String> {
    let upper = item.to_ascii_uppercase();
    let after_digits = upper.trim_start_matches(|c: char| c.is_ascii_digit());
    let not_here = "Debian's cron, GitHub Actions and Kubernetes do not all take it";
    let why = if item.contains('#') {
        format!(
            "`#` (the nth weekday of the month) is not part of this dialect: {not_here} \
             (Debian's cron would silently read `{item}` as `{}`)",
            item.split('#').next().unwrap_or_default()
        )
    } else if item.contains('?') {
        format!("`?` (Quartz's \"no value\") is not part of this dialect: {not_here}; use `*`")
    } else if item.contains('+') {
        format!(
            "`+` is not part of this dialect: {not_here}. To make the two day fields both \
             count, start one of them with `*` (see the README)"
        )
    } else if matches!(after_digits, "L" | "LW") || upper.starts_with("L-") {
        format!("`L` (the last day) is not part of this dialect: {not_here}")
    } else if after_digits == "W" && upper.len() > 1 {
        format!("`W` (the nearest weekday) is not part of this dialect: {not_here}")
    } else {
        return None;
    };
    Some(why)
}

#[cfg(test)]
#[path = "field_tests.rs"]
mod tests;
