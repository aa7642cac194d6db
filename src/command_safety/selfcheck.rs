//! The promise of one reading, as a check the property test and the fuzz target share: the
//! parts a rule matcher sees are exactly the commands the evaluator judged. For any text, the
//! reading's verdict is the evaluator's; without substitutions the strictest part decides the
//! whole; and each top-level part, read alone, is one part with the same text (no rule can be
//! matched against a piece of it the evaluator never saw as a command) and is judged no more
//! strictly than in the command (what comes before a part, a pipe or a `cd` out of the
//! workspace, can only add risk; a finding of one part never lands on another). A `cd` into a
//! subdirectory is the one exception: the parts after it are judged from there.

use super::{Context, Level, Verdict, evaluate_in, read};

/// How a command's reading breaks the promise (a finding for the property test and the
/// fuzz target to print).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokenReading {
    #[error("{command:?}: read {read:?}, evaluated {evaluated:?}")]
    Verdict {
        command: String,
        read: Verdict,
        evaluated: Verdict,
    },
    #[error("{command:?}: parts at most {strictest:?}, whole {whole:?}")]
    Strictest {
        command: String,
        strictest: Option<Level>,
        whole: Level,
    },
    #[error("{command:?}: part {part:?} is {inside:?} in the command, {alone:?} alone")]
    StricterAlone {
        command: String,
        part: String,
        inside: Level,
        alone: Level,
    },
    #[error("{command:?}: part {part:?} reads as {texts:?}")]
    Split {
        command: String,
        part: String,
        texts: Vec<String>,
    },
}

/// `Err` says how `command`'s reading breaks the promise.
pub fn one_reading_holds(command: &str) -> Result<(), BrokenReading> {
    let owned = || command.to_owned();
    let context = Context::CONTAINED;
    let reading = read(command, context);
    let alone = evaluate_in(command, context);
    if reading.verdict != alone {
        return Err(BrokenReading::Verdict {
            command: owned(),
            read: reading.verdict,
            evaluated: alone,
        });
    }
    let top: Vec<_> = reading.parts.iter().filter(|p| p.depth == 0).collect();
    let strictest = top.iter().map(|p| p.verdict.level).max();
    let plain = !reading.substitution && !reading.unreadable;
    if plain {
        let whole = reading.verdict.level;
        if strictest.is_some_and(|s| s != whole) {
            return Err(BrokenReading::Strictest {
                command: owned(),
                strictest,
                whole,
            });
        }
    }
    for part in top {
        let again = read(&part.text, context);
        if plain && !reading.moved && again.verdict.level > part.verdict.level {
            return Err(BrokenReading::StricterAlone {
                command: owned(),
                part: part.text.clone(),
                inside: part.verdict.level,
                alone: again.verdict.level,
            });
        }
        let texts: Vec<String> = again
            .parts
            .iter()
            .filter(|p| p.depth == 0)
            .map(|p| p.text.clone())
            .collect();
        if texts != [part.text.clone()] {
            return Err(BrokenReading::Split {
                command: owned(),
                part: part.text.clone(),
                texts,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::one_reading_holds;

    /// Two parts with long subjects: merging them marked the first one's subject as cut.
    #[test]
    fn found_by_the_property_test() {
        let command = "A&\"\u{1107f}\u{1d300}\u{a0f}\u{1d300}\u{1eea5}\u{d81}0#\u{135d}\u{11288}0 A\u{3a3}\u{fffc}\u{ae}\u{1218}\u{ae}A \"*";
        assert_eq!(one_reading_holds(command), Ok(()));
    }
}
