//! Where each field of a YAML document is: a map from field paths (`permissions.allow[2]`)
//! to line and column, built from the parser's events, so every problem found after
//! parsing can still point at the line a user must change.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, Span};

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    fn of(span: &Span) -> Pos {
        Pos {
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }
}

enum Frame {
    Map { key: Option<String>, path: String },
    Seq { index: usize, path: String },
}

/// Field positions of one document.
#[derive(Debug, Default)]
pub struct Locator {
    keys: HashMap<String, Pos>,
    values: HashMap<String, Pos>,
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl Locator {
    /// Index `text`. A syntax error yields what was indexed before it.
    pub fn new(text: &str) -> Locator {
        let mut loc = Locator::default();
        let mut stack: Vec<Frame> = Vec::new();
        for item in Parser::new_from_str(text) {
            let Ok((event, span)) = item else { break };
            match event {
                Event::Scalar(value, ..) => {
                    if let Some(Frame::Map {
                        key: key @ None,
                        path,
                    }) = stack.last_mut()
                    {
                        let p = child(path, &value);
                        loc.keys.insert(p, Pos::of(&span));
                        *key = Some(value.into_owned());
                    } else {
                        let p = loc.enter_value(&mut stack, &span);
                        loc.values.insert(p, Pos::of(&span));
                    }
                }
                Event::MappingStart(..) | Event::SequenceStart(..) => {
                    let path = loc.enter_value(&mut stack, &span);
                    loc.values.entry(path.clone()).or_insert(Pos::of(&span));
                    let frame = if matches!(event, Event::MappingStart(..)) {
                        Frame::Map { key: None, path }
                    } else {
                        Frame::Seq { index: 0, path }
                    };
                    stack.push(frame);
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    stack.pop();
                }
                Event::Alias(_) => {
                    let p = loc.enter_value(&mut stack, &span);
                    loc.values.insert(p, Pos::of(&span));
                }
                _ => {}
            }
        }
        loc
    }

    /// The path of the value that starts now, advancing the parent frame.
    fn enter_value(&mut self, stack: &mut [Frame], _span: &Span) -> String {
        match stack.last_mut() {
            None => String::new(),
            Some(Frame::Map { key, path }) => match key.take() {
                Some(k) => child(path, &k),
                None => path.clone(),
            },
            Some(Frame::Seq { index, path }) => {
                let p = format!("{path}[{index}]");
                *index += 1;
                p
            }
        }
    }

    /// Position of the value at `path`, or of the nearest enclosing field that exists.
    pub fn value(&self, path: &str) -> Option<Pos> {
        self.lookup(path, &self.values)
    }

    /// Position of the key at `path` (its value when the key is missing).
    pub fn key(&self, path: &str) -> Option<Pos> {
        self.keys.get(path).copied().or_else(|| self.value(path))
    }

    fn lookup(&self, path: &str, map: &HashMap<String, Pos>) -> Option<Pos> {
        let mut p = path.to_owned();
        loop {
            if let Some(pos) = map.get(&p) {
                return Some(*pos);
            }
            let cut = p.rfind(['.', '['])?;
            p.truncate(cut);
            if p.is_empty() {
                return map.get("").copied();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "version: 1\nmodel:\n  provider: openai\n  name: x\npermissions:\n  allow:\n    - Read\n    - \"Bash(cargo *)\"\nlimits: {max_turns: 4}\n";

    #[test]
    fn finds_keys_and_values() {
        let loc = Locator::new(DOC);
        assert_eq!(loc.key("model.name"), Some(Pos { line: 4, column: 3 }));
        assert_eq!(loc.value("model.name"), Some(Pos { line: 4, column: 9 }));
        assert_eq!(
            loc.value("permissions.allow[1]"),
            Some(Pos { line: 8, column: 7 })
        );
        assert_eq!(
            loc.value("limits.max_turns"),
            Some(Pos {
                line: 9,
                column: 21
            })
        );
    }

    #[test]
    fn falls_back_to_the_nearest_parent() {
        let loc = Locator::new(DOC);
        assert_eq!(
            loc.value("permissions.allow[9]"),
            Some(Pos { line: 7, column: 5 })
        );
        assert_eq!(loc.key("model.missing"), Some(Pos { line: 3, column: 3 }));
    }
}
