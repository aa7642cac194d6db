//! The per-program table: every program the evaluator knows, sorted by name for a binary search,
//! with the rule or the handler that judges it. Programs not listed need permission. Program
//! names are matched case-insensitively (`SUDO`), by their last path component (`/bin/rm`) and
//! without `.exe`; a versioned interpreter (`python3.12`) falls back to its base name.

use super::archives;
use super::catalog::*;
use super::cx::Cx;
use super::destructive;
use super::devtools;
use super::git;
use super::interpreters;
use super::loaders;
use super::node_tools;
use super::obfuscation;
use super::sed;
use super::text_tools;
use super::tokenize::Word;

/// How a program is judged.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// Always this rule, whatever the arguments.
    Fixed(&'static Rule),
    Rm,
    Mv,
    Shred,
    Truncate,
    Pytest,
    Man,
    Exec,
    Date,
    Chmod,
    Chown,
    Dd,
    WindowsDelete,
    Cipher,
    Pip,
    Shell,
    Lang,
    WinShell,
    Wrapper,
    Xargs,
    Env,
    Printenv,
    Export,
    Unset,
    Set,
    History,
    Trap,
    Echo,
    Cd,
    Create,
    Tee,
    Find,
    Fd,
    Sed,
    Awk,
    Sort,
    Uniq,
    Jq,
    Rg,
    Base64,
    Xxd,
    Tar,
    Zip,
    Unzip,
    Compress,
    Git,
    Cargo,
    Go,
    Npm,
    Pnpm,
    Yarn,
    Bun,
    Make,
    Gradle,
    Maven,
    Mount,
    Hostname,
    Compiler,
    Rustc,
    Pager,
}

use Kind::*;

/// Directories whose programs are the system's own, so naming them by path is no risk.
const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin/",
    "/sbin/",
    "/usr/bin/",
    "/usr/sbin/",
    "/usr/local/bin/",
];

/// Every known program, sorted by byte order so that it can be searched by first byte (a unit
/// test checks the order); keep it sorted when adding a program.
pub(crate) const PROGRAMS: &[(&str, Kind)] = &[
    (".", Fixed(&SOURCE)),
    (":", Fixed(&SAFE_SHELL)),
    ("[", Fixed(&SAFE_READ)),
    ("[[", Fixed(&SAFE_READ)),
    ("ack", Fixed(&SAFE_READ)),
    ("adduser", Fixed(&USERS)),
    ("ag", Fixed(&SAFE_READ)),
    ("alias", Fixed(&ALIAS)),
    ("ansible", Fixed(&CONTAINER)),
    ("ansible-playbook", Fixed(&CONTAINER)),
    ("apk", Fixed(&PACKAGE_INSTALL)),
    ("apropos", Fixed(&SAFE_READ)),
    ("apt", Fixed(&PACKAGE_INSTALL)),
    ("apt-get", Fixed(&PACKAGE_INSTALL)),
    ("aptitude", Fixed(&PACKAGE_INSTALL)),
    ("arch", Fixed(&SAFE_READ)),
    ("aria2c", Fixed(&NETWORK)),
    ("asdf", Fixed(&PACKAGE_INSTALL)),
    ("ash", Shell),
    ("at", Fixed(&SERVICE)),
    ("atrm", Fixed(&SERVICE)),
    ("awk", Awk),
    ("aws", Fixed(&CONTAINER)),
    ("az", Fixed(&CONTAINER)),
    ("b2sum", Fixed(&SAFE_READ)),
    ("base64", Base64),
    ("basename", Fixed(&SAFE_READ)),
    ("bash", Shell),
    ("batch", Fixed(&SERVICE)),
    ("bc", Fixed(&SAFE_READ)),
    ("bitsadmin", Fixed(&SYSTEM_CONFIG)),
    ("black", Fixed(&SAFE_WRITE)),
    ("blkdiscard", Fixed(&DISK)),
    ("break", Fixed(&SAFE_SHELL)),
    ("brew", Fixed(&PACKAGE_INSTALL)),
    ("bsdtar", Tar),
    ("builtin", Wrapper),
    ("bun", Bun),
    ("bundle", Fixed(&PACKAGE_INSTALL)),
    ("bundler", Fixed(&PACKAGE_INSTALL)),
    ("bunx", Fixed(&PACKAGE_EXEC)),
    ("bunzip2", Compress),
    ("busybox", Wrapper),
    ("bzcat", Fixed(&SAFE_READ)),
    ("bzip2", Compress),
    ("c++", Compiler),
    ("cacls", Fixed(&WINDOWS_ACL)),
    ("caffeinate", Wrapper),
    ("cal", Fixed(&SAFE_READ)),
    ("cargo", Cargo),
    ("cat", Fixed(&SAFE_READ)),
    ("cc", Compiler),
    ("cd", Cd),
    ("cdk", Fixed(&CONTAINER)),
    ("certutil", Fixed(&SYSTEM_CONFIG)),
    ("cfdisk", Fixed(&DISK)),
    ("chage", Fixed(&USERS)),
    ("chgrp", Fixed(&FILE_MODIFY)),
    ("chkconfig", Fixed(&SERVICE)),
    ("chmod", Chmod),
    ("choco", Fixed(&PACKAGE_INSTALL)),
    ("chown", Chown),
    ("chpasswd", Fixed(&USERS)),
    ("chronic", Wrapper),
    ("cipher", Cipher),
    ("cksum", Fixed(&SAFE_READ)),
    ("clang", Compiler),
    ("clang++", Compiler),
    ("cmd", WinShell),
    ("cmp", Fixed(&SAFE_READ)),
    ("column", Fixed(&SAFE_READ)),
    ("comm", Fixed(&SAFE_READ)),
    ("command", Wrapper),
    ("composer", Fixed(&PACKAGE_INSTALL)),
    ("conda", Fixed(&PACKAGE_INSTALL)),
    ("continue", Fixed(&SAFE_SHELL)),
    ("cp", Fixed(&FILE_MODIFY)),
    ("cpan", Fixed(&PACKAGE_INSTALL)),
    ("cpanm", Fixed(&PACKAGE_INSTALL)),
    ("crontab", Fixed(&SERVICE)),
    ("cscript", WinShell),
    ("csh", Shell),
    ("csrutil", Fixed(&SYSTEM_CONFIG)),
    ("ctest", Fixed(&SAFE_BUILD)),
    ("curl", Fixed(&NETWORK)),
    ("cut", Fixed(&SAFE_READ)),
    ("dash", Shell),
    ("date", Date),
    ("dd", Dd),
    ("declare", Export),
    ("defaults", Fixed(&SYSTEM_CONFIG)),
    ("del", WindowsDelete),
    ("deluser", Fixed(&USERS)),
    ("deno", Lang),
    ("df", Fixed(&SAFE_READ)),
    ("diff", Fixed(&SAFE_READ)),
    ("diff3", Fixed(&SAFE_READ)),
    ("dig", Fixed(&NETWORK)),
    ("dir", Fixed(&SAFE_READ)),
    ("dirname", Fixed(&SAFE_READ)),
    ("dirs", Fixed(&SAFE_SHELL)),
    ("diskpart", Fixed(&DISK)),
    ("diskutil", Fixed(&SYSTEM_CONFIG)),
    ("dnf", Fixed(&PACKAGE_INSTALL)),
    ("doas", Fixed(&PRIVILEGE)),
    ("docker", Fixed(&CONTAINER)),
    ("docker-compose", Fixed(&CONTAINER)),
    ("doctl", Fixed(&CONTAINER)),
    ("dpkg", Fixed(&PACKAGE_INSTALL)),
    ("dscl", Fixed(&USERS)),
    ("du", Fixed(&SAFE_READ)),
    ("echo", Echo),
    ("egrep", Fixed(&SAFE_READ)),
    ("eksctl", Fixed(&CONTAINER)),
    ("env", Env),
    ("erase", WindowsDelete),
    ("eslint", Fixed(&SAFE_BUILD)),
    ("eval", Fixed(&EVAL)),
    ("exec", Exec),
    ("exit", Fixed(&SAFE_SHELL)),
    ("expand", Fixed(&SAFE_READ)),
    ("explorer", Fixed(&OPEN_APP)),
    ("export", Export),
    ("expr", Fixed(&SAFE_READ)),
    ("factor", Fixed(&SAFE_READ)),
    ("false", Fixed(&SAFE_SHELL)),
    ("fd", Fd),
    ("fdfind", Fd),
    ("fdisk", Fixed(&DISK)),
    ("fetch", Fixed(&NETWORK)),
    ("fgrep", Fixed(&SAFE_READ)),
    ("file", Fixed(&SAFE_READ)),
    ("find", Find),
    ("firebase", Fixed(&CONTAINER)),
    ("firewall-cmd", Fixed(&KERNEL)),
    ("fish", Shell),
    ("flake8", Fixed(&SAFE_BUILD)),
    ("flatpak", Fixed(&PACKAGE_INSTALL)),
    ("fly", Fixed(&CONTAINER)),
    ("flyctl", Fixed(&CONTAINER)),
    ("fmt", Fixed(&SAFE_READ)),
    ("fold", Fixed(&SAFE_READ)),
    ("format", Fixed(&DISK)),
    ("free", Fixed(&SAFE_READ)),
    ("ftp", Fixed(&NETWORK)),
    ("g++", Compiler),
    ("gawk", Awk),
    ("gcc", Compiler),
    ("gcloud", Fixed(&CONTAINER)),
    ("gdisk", Fixed(&DISK)),
    ("gem", Fixed(&PACKAGE_INSTALL)),
    ("getconf", Fixed(&SAFE_READ)),
    ("getopts", Fixed(&SAFE_SHELL)),
    ("gh", Fixed(&NETWORK)),
    ("git", Git),
    ("glab", Fixed(&NETWORK)),
    ("gmake", Make),
    ("gnome-open", Fixed(&OPEN_APP)),
    ("go", Go),
    ("gofmt", Fixed(&SAFE_WRITE)),
    ("goimports", Fixed(&SAFE_WRITE)),
    ("gojq", Jq),
    ("golangci-lint", Fixed(&SAFE_BUILD)),
    ("gosu", Fixed(&PRIVILEGE)),
    ("gradle", Gradle),
    ("grep", Fixed(&SAFE_READ)),
    ("groovy", Lang),
    ("groupadd", Fixed(&USERS)),
    ("groupdel", Fixed(&USERS)),
    ("groupmod", Fixed(&USERS)),
    ("groups", Fixed(&SAFE_READ)),
    ("gsed", Sed),
    ("gsutil", Fixed(&CONTAINER)),
    ("gtar", Tar),
    ("gunzip", Compress),
    ("gzip", Compress),
    ("hadolint", Fixed(&SAFE_READ)),
    ("halt", Fixed(&POWER)),
    ("head", Fixed(&SAFE_READ)),
    ("helm", Fixed(&CONTAINER)),
    ("heroku", Fixed(&CONTAINER)),
    ("hexdump", Fixed(&SAFE_READ)),
    ("history", History),
    ("host", Fixed(&NETWORK)),
    ("hostname", Hostname),
    ("hostnamectl", Fixed(&SYSTEM_CONFIG)),
    ("http", Fixed(&NETWORK)),
    ("https", Fixed(&NETWORK)),
    ("icacls", Fixed(&WINDOWS_ACL)),
    ("id", Fixed(&SAFE_READ)),
    ("ifconfig", Fixed(&SYSTEM_CONFIG)),
    ("init", Fixed(&POWER)),
    ("insmod", Fixed(&KERNEL)),
    ("install", Fixed(&FILE_MODIFY)),
    ("ionice", Wrapper),
    ("ip", Fixed(&SYSTEM_CONFIG)),
    ("ip6tables", Fixed(&KERNEL)),
    ("ip6tables-restore", Fixed(&KERNEL)),
    ("iptables", Fixed(&KERNEL)),
    ("iptables-restore", Fixed(&KERNEL)),
    ("isort", Fixed(&SAFE_WRITE)),
    ("jaq", Jq),
    ("java", Lang),
    ("javac", Fixed(&SAFE_BUILD)),
    ("jest", Fixed(&SAFE_BUILD)),
    ("jobs", Fixed(&SAFE_SHELL)),
    ("join", Fixed(&SAFE_READ)),
    ("jq", Jq),
    ("julia", Lang),
    ("kextload", Fixed(&KERNEL)),
    ("kextunload", Fixed(&KERNEL)),
    ("kill", Fixed(&PROCESS)),
    ("killall", Fixed(&PROCESS)),
    ("kotlinc", Fixed(&SAFE_BUILD)),
    ("ksh", Shell),
    ("kubectl", Fixed(&CONTAINER)),
    ("launchctl", Fixed(&SERVICE)),
    ("ldconfig", Fixed(&SYSTEM_CONFIG)),
    ("less", Pager),
    ("links", Fixed(&NETWORK)),
    ("ln", Fixed(&FILE_MODIFY)),
    ("local", Export),
    ("locale", Fixed(&SAFE_READ)),
    ("localectl", Fixed(&SYSTEM_CONFIG)),
    ("look", Fixed(&SAFE_READ)),
    ("ls", Fixed(&SAFE_READ)),
    ("lsblk", Fixed(&SAFE_READ)),
    ("lscpu", Fixed(&SAFE_READ)),
    ("lsof", Fixed(&SAFE_READ)),
    ("lua", Lang),
    ("luajit", Lang),
    ("lynx", Fixed(&NETWORK)),
    ("lz4", Compress),
    ("mail", Fixed(&NETWORK)),
    ("make", Make),
    ("mamba", Fixed(&PACKAGE_INSTALL)),
    ("man", Man),
    ("markdownlint", Fixed(&SAFE_READ)),
    ("mawk", Awk),
    ("md5sum", Fixed(&SAFE_READ)),
    ("micromamba", Fixed(&PACKAGE_INSTALL)),
    ("minikube", Fixed(&CONTAINER)),
    ("mkdir", Create),
    ("mke2fs", Fixed(&DISK)),
    ("mkfs", Fixed(&DISK)),
    ("mksh", Shell),
    ("mkswap", Fixed(&DISK)),
    ("mocha", Fixed(&SAFE_BUILD)),
    ("modprobe", Fixed(&KERNEL)),
    ("more", Pager),
    ("mount", Mount),
    ("mshta", WinShell),
    ("mtr", Fixed(&NETWORK)),
    ("mutt", Fixed(&NETWORK)),
    ("mv", Mv),
    ("mvn", Maven),
    ("mypy", Fixed(&SAFE_BUILD)),
    ("nawk", Awk),
    ("nc", Fixed(&NETWORK)),
    ("ncat", Fixed(&NETWORK)),
    ("nerdctl", Fixed(&CONTAINER)),
    ("net", Fixed(&USERS)),
    ("netcat", Fixed(&NETWORK)),
    ("netlify", Fixed(&CONTAINER)),
    ("networksetup", Fixed(&SYSTEM_CONFIG)),
    ("nft", Fixed(&KERNEL)),
    ("nice", Wrapper),
    ("nix-env", Fixed(&PACKAGE_INSTALL)),
    ("nl", Fixed(&SAFE_READ)),
    ("nmap", Fixed(&NETWORK)),
    ("node", Lang),
    ("nodejs", Lang),
    ("nohup", Wrapper),
    ("npm", Npm),
    ("nproc", Fixed(&SAFE_READ)),
    ("npx", Fixed(&PACKAGE_EXEC)),
    ("nslookup", Fixed(&NETWORK)),
    ("nuget", Fixed(&PACKAGE_INSTALL)),
    ("numfmt", Fixed(&SAFE_READ)),
    ("nvram", Fixed(&SYSTEM_CONFIG)),
    ("oc", Fixed(&CONTAINER)),
    ("od", Fixed(&SAFE_READ)),
    ("open", Fixed(&OPEN_APP)),
    ("osascript", Lang),
    ("pacman", Fixed(&PACKAGE_INSTALL)),
    ("parted", Fixed(&DISK)),
    ("passwd", Fixed(&USERS)),
    ("paste", Fixed(&SAFE_READ)),
    ("patch", Fixed(&FILE_MODIFY)),
    ("pdm", Fixed(&PACKAGE_INSTALL)),
    ("perl", Lang),
    ("pgrep", Fixed(&SAFE_READ)),
    ("php", Lang),
    ("ping", Fixed(&NETWORK)),
    ("ping6", Fixed(&NETWORK)),
    ("pip", Pip),
    ("pip3", Pip),
    ("pipx", Fixed(&PACKAGE_INSTALL)),
    ("pkexec", Fixed(&PRIVILEGE)),
    ("pkill", Fixed(&PROCESS)),
    ("pmset", Fixed(&SYSTEM_CONFIG)),
    ("pnpm", Pnpm),
    ("pnpx", Fixed(&PACKAGE_EXEC)),
    ("podman", Fixed(&CONTAINER)),
    ("poetry", Fixed(&PACKAGE_INSTALL)),
    ("popd", Cd),
    ("port", Fixed(&PACKAGE_INSTALL)),
    ("poweroff", Fixed(&POWER)),
    ("powershell", WinShell),
    ("prettier", Fixed(&SAFE_BUILD)),
    ("printenv", Printenv),
    ("printf", Fixed(&SAFE_READ)),
    ("ps", Fixed(&SAFE_READ)),
    ("pstree", Fixed(&SAFE_READ)),
    ("pulumi", Fixed(&CONTAINER)),
    ("pushd", Cd),
    ("pwd", Fixed(&SAFE_READ)),
    ("pwsh", WinShell),
    ("py", Lang),
    ("py.test", Pytest),
    ("pylint", Fixed(&SAFE_BUILD)),
    ("pypy", Lang),
    ("pypy3", Lang),
    ("pytest", Pytest),
    ("python", Lang),
    ("python2", Lang),
    ("python3", Lang),
    ("rbash", Shell),
    ("rc-service", Fixed(&SERVICE)),
    ("rd", WindowsDelete),
    ("read", Fixed(&SAFE_SHELL)),
    ("readlink", Fixed(&SAFE_READ)),
    ("readonly", Export),
    ("realpath", Fixed(&SAFE_READ)),
    ("reboot", Fixed(&POWER)),
    ("reg", Fixed(&SYSTEM_CONFIG)),
    ("regedit", Fixed(&SYSTEM_CONFIG)),
    ("rename", Fixed(&FILE_MODIFY)),
    ("renice", Fixed(&PROCESS)),
    ("return", Fixed(&SAFE_SHELL)),
    ("rev", Fixed(&SAFE_READ)),
    ("rg", Rg),
    ("rm", Rm),
    ("rmdir", WindowsDelete),
    ("rmmod", Fixed(&KERNEL)),
    ("route", Fixed(&SYSTEM_CONFIG)),
    ("rscript", Lang),
    ("rsync", Fixed(&NETWORK)),
    ("ruby", Lang),
    ("ruff", Fixed(&SAFE_WRITE)),
    ("run0", Fixed(&PRIVILEGE)),
    ("runas", Fixed(&PRIVILEGE)),
    ("rustc", Rustc),
    ("rustfmt", Fixed(&SAFE_WRITE)),
    ("rustup", Fixed(&PACKAGE_INSTALL)),
    ("sc", Fixed(&SERVICE)),
    ("schtasks", Fixed(&SERVICE)),
    ("scoop", Fixed(&PACKAGE_INSTALL)),
    ("scp", Fixed(&NETWORK)),
    ("scutil", Fixed(&SYSTEM_CONFIG)),
    ("sed", Sed),
    ("sendmail", Fixed(&NETWORK)),
    ("seq", Fixed(&SAFE_READ)),
    ("serverless", Fixed(&CONTAINER)),
    ("service", Fixed(&SERVICE)),
    ("set", Set),
    ("setsid", Wrapper),
    ("setx", Fixed(&SYSTEM_CONFIG)),
    ("sfdisk", Fixed(&DISK)),
    ("sftp", Fixed(&NETWORK)),
    ("sh", Shell),
    ("sha1sum", Fixed(&SAFE_READ)),
    ("sha224sum", Fixed(&SAFE_READ)),
    ("sha256sum", Fixed(&SAFE_READ)),
    ("sha384sum", Fixed(&SAFE_READ)),
    ("sha512sum", Fixed(&SAFE_READ)),
    ("shellcheck", Fixed(&SAFE_READ)),
    ("shift", Fixed(&SAFE_SHELL)),
    ("shred", Shred),
    ("shuf", Fixed(&SAFE_READ)),
    ("shutdown", Fixed(&POWER)),
    ("skill", Fixed(&PROCESS)),
    ("sleep", Fixed(&SAFE_READ)),
    ("snap", Fixed(&PACKAGE_INSTALL)),
    ("socat", Fixed(&NETWORK)),
    ("sort", Sort),
    ("source", Fixed(&SOURCE)),
    ("spctl", Fixed(&SYSTEM_CONFIG)),
    ("ssh", Fixed(&NETWORK)),
    ("ssh-keyscan", Fixed(&NETWORK)),
    ("sshpass", Fixed(&NETWORK)),
    ("start", Fixed(&OPEN_APP)),
    ("stat", Fixed(&SAFE_READ)),
    ("stdbuf", Wrapper),
    ("strings", Fixed(&SAFE_READ)),
    ("su", Fixed(&PRIVILEGE)),
    ("su-exec", Fixed(&PRIVILEGE)),
    ("sudo", Fixed(&PRIVILEGE)),
    ("sum", Fixed(&SAFE_READ)),
    ("swapoff", Fixed(&SYSTEM_CONFIG)),
    ("swapon", Fixed(&SYSTEM_CONFIG)),
    ("swiftc", Fixed(&SAFE_BUILD)),
    ("sysctl", Fixed(&SYSTEM_CONFIG)),
    ("systemctl", Fixed(&SERVICE)),
    ("tac", Fixed(&SAFE_READ)),
    ("tail", Fixed(&SAFE_READ)),
    ("takeown", Fixed(&WINDOWS_ACL)),
    ("tar", Tar),
    ("taskkill", Fixed(&PROCESS)),
    ("tccutil", Fixed(&SYSTEM_CONFIG)),
    ("tclsh", Lang),
    ("tcsh", Shell),
    ("tee", Tee),
    ("telnet", Fixed(&NETWORK)),
    ("terraform", Fixed(&CONTAINER)),
    ("test", Fixed(&SAFE_READ)),
    ("tftp", Fixed(&NETWORK)),
    ("timedatectl", Fixed(&SYSTEM_CONFIG)),
    ("timeout", Wrapper),
    ("tofu", Fixed(&CONTAINER)),
    ("touch", Create),
    ("tr", Fixed(&SAFE_READ)),
    ("tracepath", Fixed(&NETWORK)),
    ("traceroute", Fixed(&NETWORK)),
    ("trap", Trap),
    ("tree", Fixed(&SAFE_READ)),
    ("true", Fixed(&SAFE_SHELL)),
    ("truncate", Truncate),
    ("ts-node", Lang),
    ("tsc", Fixed(&SAFE_BUILD)),
    ("tsort", Fixed(&SAFE_READ)),
    ("tsx", Lang),
    ("tty", Fixed(&SAFE_READ)),
    ("type", Fixed(&SAFE_READ)),
    ("typeset", Export),
    ("ufw", Fixed(&KERNEL)),
    ("umask", Fixed(&SAFE_SHELL)),
    ("umount", Fixed(&SYSTEM_CONFIG)),
    ("unalias", Fixed(&ALIAS)),
    ("uname", Fixed(&SAFE_READ)),
    ("unbuffer", Wrapper),
    ("unexpand", Fixed(&SAFE_READ)),
    ("uniq", Uniq),
    ("unlink", Fixed(&FILE_DELETE)),
    ("unset", Unset),
    ("unxz", Compress),
    ("unzip", Unzip),
    ("update-alternatives", Fixed(&SYSTEM_CONFIG)),
    ("update-rc.d", Fixed(&SERVICE)),
    ("uptime", Fixed(&SAFE_READ)),
    ("useradd", Fixed(&USERS)),
    ("userdel", Fixed(&USERS)),
    ("usermod", Fixed(&USERS)),
    ("uv", Fixed(&PACKAGE_INSTALL)),
    ("vagrant", Fixed(&CONTAINER)),
    ("vdir", Fixed(&SAFE_READ)),
    ("vercel", Fixed(&CONTAINER)),
    ("visudo", Fixed(&USERS)),
    ("vitest", Fixed(&SAFE_BUILD)),
    ("volta", Fixed(&PACKAGE_INSTALL)),
    ("w", Fixed(&SAFE_READ)),
    ("w3m", Fixed(&NETWORK)),
    ("wait", Fixed(&SAFE_SHELL)),
    ("watch", Wrapper),
    ("wc", Fixed(&SAFE_READ)),
    ("wget", Fixed(&NETWORK)),
    ("whatis", Fixed(&SAFE_READ)),
    ("whereis", Fixed(&SAFE_READ)),
    ("which", Fixed(&SAFE_READ)),
    ("who", Fixed(&SAFE_READ)),
    ("whoami", Fixed(&SAFE_READ)),
    ("whois", Fixed(&NETWORK)),
    ("winget", Fixed(&PACKAGE_INSTALL)),
    ("wipefs", Fixed(&DISK)),
    ("wmic", Fixed(&SYSTEM_CONFIG)),
    ("wscript", WinShell),
    ("wslview", Fixed(&OPEN_APP)),
    ("xargs", Xargs),
    ("xdg-open", Fixed(&OPEN_APP)),
    ("xkill", Fixed(&PROCESS)),
    ("xxd", Xxd),
    ("xz", Compress),
    ("xzcat", Fixed(&SAFE_READ)),
    ("yamllint", Fixed(&SAFE_READ)),
    ("yarn", Yarn),
    ("yq", Jq),
    ("yum", Fixed(&PACKAGE_INSTALL)),
    ("zcat", Fixed(&SAFE_READ)),
    ("zgrep", Fixed(&SAFE_READ)),
    ("zip", Zip),
    ("zsh", Shell),
    ("zstd", Compress),
    ("zypper", Fixed(&PACKAGE_INSTALL)),
];

/// A program name, lower-cased into a small buffer.
struct ProgramName {
    buf: [u8; 32],
    len: usize,
    by_path: bool,
}

impl ProgramName {
    fn parse(text: &str) -> Option<Self> {
        let cut = text.bytes().rposition(|c| c == b'/' || c == b'\\');
        let (dir, base) = match cut {
            Some(k) => (&text[..=k], &text[k + 1..]),
            None => ("", text),
        };
        let base = match base.len().checked_sub(4) {
            Some(cut) if base.is_char_boundary(cut) && base[cut..].eq_ignore_ascii_case(".exe") => {
                &base[..cut]
            }
            _ => base,
        };
        if base.is_empty() || base.len() > 32 {
            return None;
        }
        let mut buf = [0u8; 32];
        buf[..base.len()].copy_from_slice(base.as_bytes());
        buf[..base.len()].make_ascii_lowercase();
        Some(Self {
            buf,
            len: base.len(),
            by_path: !dir.is_empty() && !SYSTEM_BIN_DIRS.contains(&dir),
        })
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// `BUCKETS[c]..BUCKETS[c + 1]` is the range of `PROGRAMS` whose names start with byte `c`,
/// computed at compile time from the sorted table.
const BUCKETS: [u16; 257] = buckets();

const fn buckets() -> [u16; 257] {
    let mut out = [0u16; 257];
    let mut byte = 0;
    let mut k = 0;
    while byte < 256 {
        while k < PROGRAMS.len() && (PROGRAMS[k].0.as_bytes()[0] as usize) < byte {
            k += 1;
        }
        out[byte] = k as u16;
        byte += 1;
    }
    out[256] = PROGRAMS.len() as u16;
    out
}

fn find(name: &str) -> Option<Kind> {
    let first = usize::from(*name.as_bytes().first()?);
    let bucket = &PROGRAMS[usize::from(BUCKETS[first])..usize::from(BUCKETS[first + 1])];
    bucket
        .iter()
        .find(|(entry, _)| entry.len() == name.len() && *entry == name)
        .map(|(_, kind)| *kind)
}

fn lookup(name: &str) -> Option<Kind> {
    if let Some(kind) = find(name) {
        return Some(kind);
    }
    if name.starts_with("mkfs.") {
        return Some(Fixed(&DISK));
    }
    let unversioned = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    (unversioned.len() < name.len() && !unversioned.is_empty())
        .then(|| find(unversioned))
        .flatten()
}

/// Judges a program (not hidden in an expansion) with its arguments.
pub(crate) fn classify(program: &Word<'_>, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let Some(name) = ProgramName::parse(&program.text) else {
        return unknown(program, args, cx);
    };
    if name.by_path {
        cx.note(&EXEC_BY_PATH, &program.text);
    }
    match lookup(name.as_str()) {
        Some(kind) => dispatch(kind, name.as_str(), args, cx),
        None => unknown(program, args, cx),
    }
}

/// An unknown program needs permission; if its arguments, from a known program on, are a
/// disabled command (`chrt -r 1 rm -rf /`, `firejail rm -rf ~`), it may well run them as a
/// wrapper does, and is disabled too: a wrapper cn-run does not know is no way around a
/// disabled command.
fn unknown(program: &Word<'_>, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    cx.note(&UNKNOWN, &program.text);
    let known = |w: &Word<'_>| {
        !w.text.starts_with('-')
            && ProgramName::parse(&w.text).is_some_and(|n| lookup(n.as_str()).is_some())
    };
    let tries = if cx.acc.probing { 1 } else { 16 };
    let mut starts = (0..args.len()).filter(|&k| known(args[k])).take(tries);
    if starts.any(|k| cx.would_be_disabled(&args[k..])) {
        cx.note(&UNKNOWN_WRAPS_DISABLED, &program.text);
    }
}

fn dispatch(kind: Kind, name: &str, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    if loaders::loads_elsewhere(name, args, cx) {
        return;
    }
    let rule = match kind {
        Fixed(rule) if cx.after_pipe && std::ptr::eq(rule, &NETWORK) => &PIPE_TO_NETWORK,
        Fixed(rule) => rule,
        Rm => destructive::rm(args),
        Mv => destructive::mv(args),
        Shred => destructive::shred(args),
        Truncate => destructive::truncate(args),
        Exec if args.is_empty() => &SAFE_SHELL,
        Exec => &EVAL,
        Date => text_tools::date(args),
        Chmod => destructive::chmod(args),
        Chown => destructive::chown(args),
        Dd => destructive::dd(args),
        WindowsDelete => destructive::windows_delete(args),
        Cipher => destructive::cipher(args),
        Echo => return obfuscation::echo(args, cx),
        Base64 => return obfuscation::base64(args, cx),
        Xxd => return obfuscation::xxd(args, cx),
        Shell => return interpreters::shell(name, args, cx),
        Lang => return interpreters::lang(name, args, cx),
        WinShell => return interpreters::win_shell(name, args, cx),
        Wrapper => return interpreters::wrapper(name, args, cx),
        Xargs => return interpreters::xargs(args, cx),
        Env => return interpreters::env(args, cx),
        Printenv => return interpreters::printenv(args, cx),
        Export => return interpreters::export(name, args, cx),
        Unset => return interpreters::unset(args, cx),
        Set => return interpreters::set(args, cx),
        History => return interpreters::history(args, cx),
        Trap => return interpreters::trap(args, cx),
        Cd => return text_tools::cd(name, args, cx),
        Create => return text_tools::create(name, args, cx),
        Tee => return text_tools::tee(args, cx),
        Find => return text_tools::find(args, cx),
        Fd => return text_tools::fd(args, cx),
        Sed => return sed::sed(args, cx),
        Awk => return text_tools::awk(args, cx),
        Sort => return text_tools::sort(args, cx),
        Uniq => return text_tools::uniq(args, cx),
        Jq => return text_tools::jq(name, args, cx),
        Rg => return text_tools::rg(args, cx),
        Tar => return archives::tar(args, cx),
        Zip => return archives::zip(args, cx),
        Unzip => return archives::unzip(args, cx),
        Compress => return archives::compress(name, args, cx),
        Mount | Hostname => text_tools::admin_query(args),
        Git => return git::git(args, cx),
        Cargo => return devtools::cargo(args, cx),
        Go => return devtools::go(args, cx),
        Npm => return node_tools::npm(args, cx),
        Pnpm => return node_tools::pnpm(args, cx),
        Yarn => return node_tools::yarn(args, cx),
        Bun => return node_tools::bun(args, cx),
        Make => return devtools::make(args, cx),
        Gradle => return devtools::gradle(args, cx),
        Maven => return devtools::maven(args, cx),
        Pip => return devtools::pip(args, cx),
        Compiler => return devtools::compiler(name, args, cx),
        Rustc => return devtools::rustc(args, cx),
        Pytest => return devtools::pytest(args, cx),
        Man => return devtools::man(args, cx),
        Pager => text_tools::pager(args),
    };
    cx.note(rule, name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_table_is_sorted_and_unique() {
        for pair in PROGRAMS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (name, _) in PROGRAMS {
            assert!(
                find(name).is_some(),
                "{name} is not found through its bucket"
            );
        }
    }

    #[test]
    fn names_are_found_by_case_path_suffix_and_version() {
        for (text, expected) in [
            ("SUDO", "sudo"),
            ("/usr/bin/rm", "rm"),
            ("powershell.exe", "powershell"),
            ("C:\\Windows\\cmd.exe", "cmd"),
        ] {
            let name = ProgramName::parse(text).map(|n| n.as_str().to_owned());
            assert_eq!(name.as_deref(), Some(expected));
        }
        assert!(ProgramName::parse("/usr/bin/rm").is_some_and(|n| !n.by_path));
        assert!(ProgramName::parse("./rm").is_some_and(|n| n.by_path));
        assert!(matches!(lookup("python3.12"), Some(Lang)));
        assert!(matches!(lookup("mkfs.ext4"), Some(Fixed(rule)) if rule.id == "critical.disk"));
        assert!(lookup("python-evil").is_none());
    }
}
