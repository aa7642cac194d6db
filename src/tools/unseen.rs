//! What a contained command cannot see, though cn-run's own process can: the host's
//! temporary folders (a contained command has private, empty ones) and, when cn-run runs as
//! root, files that root without capabilities cannot read (a contained root command holds no
//! `CAP_DAC_OVERRIDE` or `CAP_DAC_READ_SEARCH` and no supplementary group, so another user's
//! `0600` file or `0700` folder is closed to it). The file tools read such a path only when a
//! rule names it (`tools::view`), and the checkpointer never stores one in `.git`
//! (`checkpoint::beneath`), so they see no more than a contained command.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The host's temporary folders; inside the sandbox each is a private tmpfs.
const PRIVATE_IN_THE_SANDBOX: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// Why a contained command could not read `real` (a real path outside the workspace), if so.
pub(crate) fn unseen_by_commands(real: &Path) -> Option<&'static str> {
    if PRIVATE_IN_THE_SANDBOX.iter().any(|t| real.starts_with(t)) {
        return Some(
            "in the host's temporary folders, which contained commands do not see (theirs are \
             private and empty)",
        );
    }
    closed_to_capless_root(real, Path::new("/"))
}

/// Why a contained root command could not read `real`, if cn-run runs as root and its mode
/// bits (or a folder's above it, below `top`) close it to root without capabilities.
pub(crate) fn closed_to_capless_root(real: &Path, top: &Path) -> Option<&'static str> {
    let closed = rustix::process::geteuid().is_root() && !capless_root_reads(real, top);
    closed.then_some(
        "closed to root without capabilities by its mode bits (or a folder above it), as \
         contained commands run",
    )
}

/// Whether uid 0 with gid 0, no supplementary group and no capability holds `bits` (of
/// `0o7`: read 4, write 2, search 1) on a file of this `mode`, owner and group: the owner
/// bits when root owns it, else the group bits when its group is 0, else the others'.
pub(crate) fn capless_root_may(mode: u32, uid: u32, gid: u32, bits: u32) -> bool {
    let shift = match (uid, gid) {
        (0, _) => 6,
        (_, 0) => 3,
        _ => 0,
    };
    (mode >> shift) & bits == bits
}

/// Whether uid 0 with gid 0, no supplementary group and no capability may read `real`:
/// every folder above it searchable and the file readable (a folder also searchable), by
/// the owner bits when root owns it, else the group bits when its group is 0, else the
/// others'. What cannot be looked at is left to the open (which then fails on its own).
fn capless_root_reads(real: &Path, top: &Path) -> bool {
    let allows = |m: &std::fs::Metadata, bits| capless_root_may(m.mode(), m.uid(), m.gid(), bits);
    let folders_open = real
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(top) && *dir != top)
        .all(|dir| std::fs::metadata(dir).map_or(true, |m| allows(&m, 0o1)));
    folders_open
        && std::fs::metadata(real).map_or(true, |m| match m.is_dir() {
            true => allows(&m, 0o5),
            false => allows(&m, 0o4),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_hosts_temporary_folders_are_unseen() {
        for p in ["/tmp/x", "/var/tmp", "/dev/shm/a/b"] {
            assert!(unseen_by_commands(Path::new(p)).is_some(), "{p}");
        }
        assert!(unseen_by_commands(Path::new("/tmpx/a")).is_none());
        assert!(unseen_by_commands(Path::new("/etc/hostname")).is_none());
    }

    #[test]
    fn mode_bits_decide_for_root_without_capabilities() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(
            capless_root_reads(&file, Path::new("/")),
            "root's own 0600 file"
        );
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
        assert!(
            !capless_root_reads(&file, Path::new("/")),
            "another user's 0600 file"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o604)).unwrap();
        assert!(
            capless_root_reads(&file, Path::new("/")),
            "readable by others"
        );
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(dir.path(), Some(65534), Some(0)).unwrap();
        assert!(
            !capless_root_reads(&file, Path::new("/")),
            "a folder above closed"
        );
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o710)).unwrap();
        assert!(
            capless_root_reads(&file, Path::new("/")),
            "a folder above open to group 0"
        );
    }
}
