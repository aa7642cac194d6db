//! Every rule the evaluator can cite: a stable id, the level it imposes and the words that explain
//! it. One table, so that ids stay unique and reasons stay consistent; `reason` text is written to
//! follow the subject it is shown with (a program, a path or a variable), e.g. "`curl` talks to the
//! network".

use super::Level;

const SAFE: Level = Level::AllowedWithoutPermission;
const ASK: Level = Level::AllowedWithPermission;
const DENY: Level = Level::Disabled;

/// One rule. Among findings of equal level the one with the higher `weight` explains the verdict:
/// 0 for catch-alls, 1 for ordinary rules, 2 for the bypass detectors (pipes, secrets, obfuscation).
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) id: &'static str,
    pub(crate) level: Level,
    pub(crate) weight: u8,
    pub(crate) why: &'static str,
}

macro_rules! rules {
    ($($name:ident = $id:literal, $level:ident, $weight:literal, $why:literal;)*) => {
        $(pub(crate) const $name: Rule = Rule { id: $id, level: $level, weight: $weight, why: $why };)*
        #[cfg(test)]
        pub(crate) const ALL: &[&Rule] = &[$(&$name),*];
    };
}

rules! {
    // Disabled: no policy can allow these.
    RM_ROOT = "critical.rm_root", DENY, 1,
        "deletes or moves away the filesystem root, the home directory or a whole system directory";
    RM_SYSTEM = "critical.rm_system", DENY, 1,
        "deletes or moves away files inside a protected system directory";
    PRIVILEGE = "critical.privilege", DENY, 1,
        "runs a command as another user (privilege escalation)";
    EVAL = "critical.eval", DENY, 1,
        "executes a string or replaces the shell, which hides what really runs";
    DISK = "critical.disk", DENY, 1, "formats, partitions or wipes a disk";
    DEVICE_WRITE = "critical.device_write", DENY, 1, "is a disk device; writing to it destroys data";
    CHMOD = "critical.chmod", DENY, 1,
        "opens a system path to everyone or sets the setuid/setgid bit";
    CHOWN_ROOT = "critical.chown_root", DENY, 1,
        "hands files to root, or changes owners across a system directory";
    KERNEL = "critical.kernel", DENY, 1, "changes kernel modules or the firewall";
    POWER = "critical.power", DENY, 1, "shuts down or restarts the machine";
    WINDOWS_WIPE = "critical.windows_wipe", DENY, 1,
        "deletes or wipes files recursively on Windows";
    WINDOWS_ACL = "critical.windows_acl", DENY, 1,
        "takes ownership of files or grants rights on them on Windows";
    FORK_BOMB = "critical.fork_bomb", DENY, 2,
        "is a function that starts copies of itself (a fork bomb)";
    UNKNOWN_WRAPS_DISABLED = "critical.unknown_wrapper", DENY, 1,
        "is not a program cn-run knows, and its arguments hold a disabled command, which it may \
         run (as `nice` or `timeout` would)";
    HIDDEN_DESTRUCTIVE = "critical.hidden_program", DENY, 1,
        "hides the program name in a variable, and its arguments would be destructive for rm, \
         chmod or chown";

    // Needs permission: high risk.
    NETWORK = "network.tool", ASK, 1,
        "talks to the network; it could download code or send data out";
    PIPE_TO_SHELL = "pipe.to_shell", ASK, 2, "runs the text piped into it as code";
    PIPE_TO_NETWORK = "pipe.to_network", ASK, 2, "sends the text piped into it over the network";
    PACKAGE_INSTALL = "package.install", ASK, 1,
        "installs, updates or removes packages, which runs their install scripts";
    PACKAGE_EXEC = "package.exec", ASK, 1, "downloads or runs a program from a package";
    SCRIPT = "interpreter.script", ASK, 1, "runs a script or a program file";
    INLINE = "interpreter.inline", ASK, 1, "runs code given on the command line";
    STDIN_CODE = "interpreter.stdin", ASK, 1, "runs code read from standard input";
    EXEC_BY_PATH = "exec.by_path", ASK, 1, "runs a file by its path";
    SOURCE = "shell.source", ASK, 1, "runs a script inside the current shell";
    ENV_DANGEROUS = "env.dangerous_var", ASK, 1,
        "is not on the short list of harmless variables (locale, colour, CI, log levels); a \
         variable can choose which programs, plugins or configs run";
    GIT_LOCATION = "git.location", ASK, 1,
        "makes git use a repository, work tree or config the command chooses, whose config can \
         run programs";
    REPO_CODE = "build.uncontained", ASK, 1,
        "runs code the repository defines (build scripts, tests, package scripts), and no \
         enforced sandbox contains it";
    READONLY_WRITE = "readonly.write", ASK, 1,
        "may change the tree, and this run is read-only with no sandbox to keep it so";
    ENV_DUMP = "secrets.env_dump", ASK, 2,
        "prints the environment or its variables, which may include secrets";
    ALIAS = "shell.alias", ASK, 1, "defines an alias, which changes what later commands do";
    FUNCTION = "shell.function", ASK, 1,
        "defines a shell function, which changes what later commands do";
    HISTORY = "shell.history", ASK, 1, "changes or clears the shell history";
    PROCESS = "process.control", ASK, 1, "stops or signals processes";
    SERVICE = "system.service", ASK, 1, "controls system services or scheduled jobs";
    USERS = "system.users", ASK, 1, "changes user accounts or passwords";
    SYSTEM_CONFIG = "system.config", ASK, 1, "changes system settings";
    OPEN_APP = "system.open", ASK, 1, "opens a file or an application outside the terminal";
    CONTAINER = "container.cloud", ASK, 1, "controls containers, clusters or cloud resources";
    FILE_DELETE = "file.delete", ASK, 1, "deletes files";
    FILE_MODIFY = "file.modify", ASK, 1, "moves, copies, links, rewrites or re-permissions files";
    EDIT_IN_PLACE = "file.edit_in_place", ASK, 1, "edits files in place";
    WRITE_OUTSIDE = "write.outside_workspace", ASK, 1,
        "lies outside the workspace; writing there needs permission";
    WRITE_GIT = "write.git_internals", ASK, 1,
        "lies inside .git; writing there can plant hooks or change the repository's config";
    CD_OUTSIDE = "cd.outside_workspace", ASK, 1, "leaves the workspace";
    ARCHIVE_EXTRACT = "archive.extract", ASK, 1, "extracts an archive, which can overwrite files";
    FIND_EXEC = "find.exec", ASK, 1, "runs a command, deletes or writes files for each match";
    RUNS_COMMANDS = "tool.runs_commands", ASK, 1,
        "is given an option or script that runs other commands or writes files";
    LOADS_ELSEWHERE = "tool.loads_elsewhere", ASK, 1,
        "is given an option that loads a plugin, module or init script, or a config, build \
         file or project from outside the workspace, so it runs code the repository does not hold";
    GIT_NETWORK = "git.network", ASK, 1, "contacts a remote repository";
    GIT_MODIFY = "git.modifies", ASK, 1,
        "changes the repository (commits, branches, history, config or the work tree)";
    BUILD_OTHER = "build.other", ASK, 1,
        "is not one of the known build, test, lint or check steps of this tool";
    OBF_BASE64 = "obfuscation.decode", ASK, 2, "decodes hidden (base64 or hex) data";
    OBF_ESCAPES = "obfuscation.escapes", ASK, 2,
        "contains \\x or \\u escapes, a common way to hide a command";
    OBF_ECHO_E = "obfuscation.echo_e", ASK, 2, "turns escape sequences into hidden characters";
    OBF_ANSI_C = "obfuscation.ansi_c", ASK, 2,
        "uses $'…' escape quoting, a common way to hide a command";
    OBF_INVISIBLE = "obfuscation.invisible", ASK, 2,
        "contains invisible Unicode characters that can disguise a command";
    SECRET_FILE = "secrets.file", ASK, 2,
        "looks like a secret (a key, credentials or a .env file); touching it needs permission";
    SECRET_VAR = "secrets.variable", ASK, 2,
        "looks like the name of a secret; expanding it needs permission";
    MULTILINE = "quoting.multiline", ASK, 1,
        "A quoted argument spans several lines, which makes the command easy to misread.";
    PARSE_ERROR = "parse.error", ASK, 1,
        "The command could not be tokenised (unbalanced quotes, brackets or here-document).";
    TOO_DEEP = "parse.too_deep", ASK, 1, "The command nests substitutions or wrapped commands too deeply to check.";

    HIDDEN_PROGRAM = "expansion.program", ASK, 1,
        "supplies the program name from a variable or substitution, so what runs is unknown";

    // Needs permission: catch-alls.
    EXPANSION = "expansion.variable", ASK, 0,
        "expands a variable, so the final command depends on its value";
    SUBSTITUTION = "substitution", ASK, 0,
        "runs a command substitution whose output becomes part of the command";
    UNKNOWN = "unknown", ASK, 0, "is not on the list of commands known to be safe";

    // Safe.
    SAFE_READ = "safe.read_only", SAFE, 1, "only reads files or prints information";
    SAFE_BUILD = "safe.build", SAFE, 1,
        "is a workspace-local build, test, lint or format step";
    SAFE_GIT = "safe.git_read", SAFE, 1, "only reads the git repository";
    SAFE_WRITE = "safe.workspace_write", SAFE, 1,
        "only creates or writes files inside the workspace";
    SAFE_SHELL = "safe.shell", SAFE, 1, "only changes the state of this shell";
    SAFE_EMPTY = "safe.empty", SAFE, 0, "The command contains nothing to run.";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_namespaced_by_level() {
        let mut ids: Vec<&str> = ALL.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        let count = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), count, "duplicate rule ids");
        for rule in ALL {
            assert!(!rule.why.is_empty(), "{}", rule.id);
            if rule.id.starts_with("critical.") {
                assert_eq!(rule.level, DENY, "{}", rule.id);
            }
            if rule.id.starts_with("safe.") {
                assert_eq!(rule.level, SAFE, "{}", rule.id);
            }
            if rule.level == SAFE {
                assert!(rule.id.starts_with("safe."), "{}", rule.id);
            }
        }
    }
}
