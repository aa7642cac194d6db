//! Rules for archivers and compressors: listing and creating archives inside the workspace is
//! fine (the archive file is judged as a write), extracting can overwrite anything and needs
//! permission, and options that run programs (`tar -I`, `--to-command`, `zip -TT`) need it too.

use super::args::first_positional;
use super::catalog::*;
use super::cx::Cx;
use super::cx::check_write;
use super::tokenize::Word;

/// `tar`: listing and creating are fine (the archive is judged as a write); extracting can
/// overwrite anything; some options run programs.
pub(crate) fn tar(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let mut extract = false;
    let mut create = false;
    let mut archive = None;
    for (k, word) in args.iter().enumerate() {
        let text = &*word.text;
        let cluster = if let Some(long) = text.strip_prefix("--") {
            extract |= long == "extract" || long == "get";
            create |= matches!(long, "create" | "append" | "update");
            if [
                "to-command",
                "use-compress-program",
                "checkpoint-action",
                "info-script",
                "new-volume-script",
            ]
            .iter()
            .any(|o| long.starts_with(o))
            {
                return cx.note(&RUNS_COMMANDS, "tar");
            }
            archive = archive.or(long.strip_prefix("file="));
            continue;
        } else if let Some(short) = text.strip_prefix('-') {
            short
        } else if k == 0 {
            text
        } else {
            continue;
        };
        extract |= cluster.contains('x');
        create |= cluster.contains(['c', 'r', 'u', 'A']);
        if cluster.contains('I') {
            return cx.note(&RUNS_COMMANDS, "tar -I");
        }
        if cluster.contains('f') {
            archive = archive.or(args.get(k + 1).map(|w| &*w.text));
        }
    }
    if extract {
        return cx.note(&ARCHIVE_EXTRACT, "tar");
    }
    if let (true, Some(path)) = (create, archive) {
        check_write(path, cx);
    }
    cx.note(if create { &SAFE_WRITE } else { &SAFE_READ }, "tar");
}

/// `zip OUT FILES…`: OUT is a write; `-TT` runs a command.
pub(crate) fn zip(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if args
        .iter()
        .any(|w| w.text == "-TT" || w.text.starts_with("--unzip-command"))
    {
        return cx.note(&RUNS_COMMANDS, "zip -TT");
    }
    if let Some(out) = args.get(first_positional(args, &["-b", "-n", "-P", "-t", "-tt"])) {
        check_write(&out.text, cx);
    }
    cx.note(&SAFE_WRITE, "zip");
}

/// `unzip -l`, `-t`, `-v`, `-p`, `-c`, `-Z` only read; anything else extracts.
pub(crate) fn unzip(args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let reads = args.iter().any(|w| {
        matches!(
            &*w.text,
            "-l" | "-t" | "-v" | "-p" | "-c" | "-Z" | "-lv" | "-tq"
        )
    });
    cx.note(if reads { &SAFE_READ } else { &ARCHIVE_EXTRACT }, "unzip");
}

/// `gzip` and friends replace files in place, unless writing to standard output or testing.
pub(crate) fn compress(name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let reads = args.iter().any(|w| {
        let t = &*w.text;
        matches!(t, "--stdout" | "--to-stdout" | "--list" | "--test")
            || (t.starts_with('-') && !t.starts_with("--") && t.contains(['c', 'l', 't']))
    });
    cx.note(if reads { &SAFE_READ } else { &FILE_MODIFY }, name);
}
