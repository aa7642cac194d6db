//! Rules for commands that destroy data or open up the system: `rm`, `chmod`, `chown`, `dd`, and
//! their Windows cousins. Each returns the rule that applies so the same judgement serves a
//! program hidden in a variable (`${RM} -rf /`).

use super::Level;
use super::catalog::{self, Rule};
use super::paths;
use super::tokenize::Word;

/// Positional arguments (options skipped until `--`), with expansions judged as empty.
fn positionals<'w>(args: &'w [&Word<'_>]) -> impl Iterator<Item = std::borrow::Cow<'w, str>> {
    let mut options_done = false;
    args.iter().filter_map(move |w| {
        let text = &*w.text;
        if !options_done && text == "--" {
            options_done = true;
            return None;
        }
        let is_option = !options_done && text.len() > 1 && text.starts_with('-');
        (!is_option).then(|| paths::without_expansions(text))
    })
}

/// Whether a target is nothing but expansions (`$(…)`, `$DIR`, `` `…` ``) under a recursive or
/// forced command: it may be `/` or `~` as well as anything else, so it is judged as they are.
fn dynamic_target(args: &[&Word<'_>]) -> bool {
    let forceful = args.iter().any(|w| {
        let t = &*w.text;
        t == "--recursive"
            || t == "--force"
            || (t.starts_with('-') && !t.starts_with("--") && t.contains(['r', 'R', 'f']))
    });
    forceful
        && args
            .iter()
            .any(|w| !w.text.starts_with('-') && paths::only_expansions(&w.text))
}

pub(crate) fn rm(args: &[&Word<'_>]) -> &'static Rule {
    if dynamic_target(args) {
        return &catalog::RM_ROOT;
    }
    for target in positionals(args) {
        if paths::is_root_level(&target) {
            return &catalog::RM_ROOT;
        }
        if paths::is_protected(&target) {
            return &catalog::RM_SYSTEM;
        }
    }
    &catalog::FILE_DELETE
}

/// `mv SOURCE… DEST`: moving the root, home or a system directory away destroys it as surely as
/// deleting it.
pub(crate) fn mv(args: &[&Word<'_>]) -> &'static Rule {
    let all: Vec<_> = positionals(args).collect();
    let raw: Vec<&str> = args
        .iter()
        .map(|w| &*w.text)
        .filter(|t| !t.starts_with('-'))
        .collect();
    if raw[..raw.len().saturating_sub(1)]
        .iter()
        .any(|t| paths::only_expansions(t))
    {
        return &catalog::RM_ROOT;
    }
    let sources = &all[..all.len().saturating_sub(1)];
    if sources.iter().any(|s| paths::is_root_level(s)) {
        return &catalog::RM_ROOT;
    }
    if sources.iter().any(|s| paths::is_protected(s)) {
        return &catalog::RM_SYSTEM;
    }
    &catalog::FILE_MODIFY
}

/// Whether an operand is made only of expansions, so it may stand for `/`, `~` or a disk.
fn any_dynamic(args: &[&Word<'_>]) -> bool {
    args.iter()
        .any(|w| !w.text.starts_with('-') && paths::only_expansions(&w.text))
}

/// `shred` overwrites files; on a disk device it wipes the disk, and a dynamic target may be one.
pub(crate) fn shred(args: &[&Word<'_>]) -> &'static Rule {
    let device = positionals(args).any(|p| paths::write_target(&p) == paths::WriteTarget::Device);
    if device || any_dynamic(args) {
        return &catalog::DISK;
    }
    if positionals(args).any(|p| paths::is_root_level(&p) || paths::is_protected(&p)) {
        return &catalog::RM_SYSTEM;
    }
    &catalog::FILE_DELETE
}

/// `truncate` empties files: a system file, or a dynamic target that may be one, is refused.
pub(crate) fn truncate(args: &[&Word<'_>]) -> &'static Rule {
    let critical = positionals(args).any(|p| paths::is_root_level(&p) || paths::is_protected(&p));
    if critical || any_dynamic(args) {
        return &catalog::RM_SYSTEM;
    }
    &catalog::FILE_MODIFY
}

pub(crate) fn chmod(args: &[&Word<'_>]) -> &'static Rule {
    let mut positional = positionals(args);
    let Some(mode) = positional.next() else {
        return &catalog::FILE_MODIFY;
    };
    let (setuid, world_writable) = mode_bits(&mode);
    if setuid || dynamic_target(args) {
        return &catalog::CHMOD;
    }
    for target in positional {
        let root = paths::is_root_level(&target);
        if root || (world_writable && paths::is_protected(&target)) {
            return &catalog::CHMOD;
        }
    }
    &catalog::FILE_MODIFY
}

/// (sets setuid/setgid, makes writable by everyone) for a numeric or symbolic mode.
fn mode_bits(mode: &str) -> (bool, bool) {
    if !mode.is_empty() && mode.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
        let digits = mode.as_bytes();
        let special = digits.len() >= 4 && (digits[digits.len() - 4] - b'0') & 6 != 0;
        let others = digits[digits.len() - 1] - b'0';
        return (special, others & 2 != 0);
    }
    let mut setuid = false;
    let mut world = false;
    for clause in mode.split(',') {
        let Some(op) = clause.find(['+', '=']) else {
            continue;
        };
        let (who, perms) = clause.split_at(op);
        setuid |= perms.contains('s');
        world |= perms.contains('w') && (who.is_empty() || who.contains(['a', 'o']));
    }
    (setuid, world)
}

pub(crate) fn chown(args: &[&Word<'_>]) -> &'static Rule {
    if dynamic_target(args) {
        return &catalog::CHOWN_ROOT;
    }
    let mut positional = positionals(args);
    let Some(owner) = positional.next() else {
        return &catalog::FILE_MODIFY;
    };
    let user = owner.split([':', '.']).next().unwrap_or("");
    if user == "root" || user == "0" {
        return &catalog::CHOWN_ROOT;
    }
    if positional.any(|t| paths::is_root_level(&t)) {
        return &catalog::CHOWN_ROOT;
    }
    &catalog::FILE_MODIFY
}

pub(crate) fn dd(args: &[&Word<'_>]) -> &'static Rule {
    for arg in args {
        if let Some(out) = arg.text.strip_prefix("of=") {
            if paths::only_expansions(out) {
                return &catalog::DISK;
            }
            return match paths::write_target(out) {
                paths::WriteTarget::Device => &catalog::DISK,
                paths::WriteTarget::Outside => &catalog::WRITE_OUTSIDE,
                _ => &catalog::FILE_MODIFY,
            };
        }
    }
    &catalog::FILE_MODIFY
}

/// `del`, `erase`, `rd`, `rmdir`: recursive (`/s`) deletion is refused.
pub(crate) fn windows_delete(args: &[&Word<'_>]) -> &'static Rule {
    if args.iter().any(|w| w.text.eq_ignore_ascii_case("/s")) {
        &catalog::WINDOWS_WIPE
    } else {
        &catalog::FILE_DELETE
    }
}

/// `cipher /w` wipes free space.
pub(crate) fn cipher(args: &[&Word<'_>]) -> &'static Rule {
    let wipes = args.iter().any(|w| {
        w.text.len() >= 2
            && w.text.as_bytes()[0] == b'/'
            && w.text.as_bytes()[1].eq_ignore_ascii_case(&b'w')
    });
    if wipes {
        &catalog::WINDOWS_WIPE
    } else {
        &catalog::SYSTEM_CONFIG
    }
}

/// Whether these arguments would be refused after `rm`, `chmod` or `chown`.
pub(crate) fn critical_for_any(args: &[&Word<'_>]) -> bool {
    [rm(args), chmod(args), chown(args)]
        .iter()
        .any(|rule| rule.level == Level::Disabled)
}
