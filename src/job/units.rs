//! Sizes and durations as job files and flags write them (`10MB`, `512 KiB`; `15m`,
//! `1h30m`, `2 hours`, a plain number of seconds).

use std::time::Duration;

use super::error::ValueError;

/// `10MB`, `512 KiB`, `1G`, `2048` → bytes (units are powers of 1024).
pub(super) fn parse_size(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| ValueError::NotASize(text.to_owned()))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => {
            return Err(ValueError::SizeUnit {
                text: text.to_owned(),
                unit: other.to_owned(),
            });
        }
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| ValueError::TooLarge(text.to_owned()))
}

/// Parse `15m`, `90s`, `1h30m`, `2 hours` (or a plain number of seconds).
pub fn parse_duration(text: &str) -> Result<Duration, ValueError> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let d: jiff::SignedDuration = t
        .parse()
        .map_err(|_| ValueError::NotADuration(t.to_owned()))?;
    if d.is_negative() {
        return Err(ValueError::Negative(t.to_owned()));
    }
    Ok(d.unsigned_abs())
}
