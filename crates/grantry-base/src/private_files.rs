//! Directories and files private to the user the program runs as, whatever the umask: a
//! directory is 0700 and each file 0600; looser ones made by an older version are tightened,
//! and said so. The server keeps its data directory (the SQLite store and its `-wal` and
//! `-shm` files, the generated sealing key) so, and the bridge its token cache.

use std::fs::Permissions;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The bits that let anyone but the owner in.
const GROUP_OR_OTHERS: u32 = 0o077;

/// Creates `dir` (and its parents) 0700, or makes an existing one 0700.
pub fn prepare(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    tighten(dir, 0o700)
}

/// Makes sure the file at `path` exists and is 0600 (SQLite gives its `-wal` and `-shm`
/// files the mode of the database file, so creating that one first covers them too).
pub fn private_file(path: &Path) -> io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => tighten(path, 0o600),
        Err(e) => Err(e),
    }
}

/// Makes the existing `path` `mode` if anyone but the owner may use it; absent is fine.
pub fn tighten(path: &Path, mode: u32) -> io::Result<()> {
    let current = match std::fs::metadata(path) {
        Ok(metadata) => metadata.permissions().mode() & 0o777,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if current & GROUP_OR_OTHERS != 0 {
        std::fs::set_permissions(path, Permissions::from_mode(mode))?;
        tracing::info!(
            path = %path.display(),
            was = format!("{current:o}"),
            now = format!("{mode:o}"),
            "made private to grantry's user"
        );
    }
    Ok(())
}

/// The mode of `path` when its group or others may read it.
pub fn readable_by_others(path: &Path) -> io::Result<Option<u32>> {
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    Ok((mode & GROUP_OR_OTHERS != 0).then_some(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_directory_and_files_are_private_new_or_old() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data");
        prepare(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        prepare(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700, "an older, looser directory is tightened");

        let file = dir.join("grantry.db");
        private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
        assert_eq!(readable_by_others(&file).unwrap(), Some(0o644));
        private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(readable_by_others(&file).unwrap(), None);
        tighten(&dir.join("absent"), 0o600).unwrap();
    }
}
