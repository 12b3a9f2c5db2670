//! A read-only shared mapping of a whole file, unmapped when dropped: what `cache`
//! (mincore), `warm --lock` (mlock) and `bench load` (populate, touch) each need.

use std::fs::File;
use std::os::fd::AsRawFd;

pub struct Mapping {
    addr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is plain read-only memory owned by this value; nothing aliases it.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `file` read-only; `flags` adds to MAP_SHARED (MAP_POPULATE).
    pub fn new(file: &File, len: usize, flags: i32) -> std::io::Result<Self> {
        Self::window(file, 0, len, flags)
    }

    /// Maps `len` bytes of `file` from `offset` (a multiple of the page size).
    pub fn window(file: &File, offset: u64, len: usize, flags: i32) -> std::io::Result<Self> {
        let offset = libc::off_t::try_from(offset)
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EOVERFLOW))?;
        // SAFETY: a fresh read-only shared mapping of an open file, owned by the result.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED | flags,
                file.as_raw_fd(),
                offset,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping { addr, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn advise(&self, advice: i32) -> std::io::Result<()> {
        // SAFETY: advice on our own mapping.
        if unsafe { libc::madvise(self.addr, self.len, advice) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// MADV_POPULATE_READ (Linux 5.14): reads the range into the page cache and maps
    /// it, without touching it. Past the end of the file it fails with EFAULT where
    /// a touch would raise SIGBUS; on older kernels it fails with EINVAL.
    pub fn populate(&self) -> std::io::Result<()> {
        loop {
            match self.advise(libc::MADV_POPULATE_READ) {
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {}
                other => return other,
            }
        }
    }

    /// mincore(2): one byte per page, bit 0 set where the page is in the page cache.
    /// Asks only; faults nothing in.
    pub fn residency(&self, page: u64) -> std::io::Result<Vec<u8>> {
        let mut vec = vec![0u8; (self.len as u64).div_ceil(page) as usize];
        // SAFETY: `vec` has one byte per page of the mapping.
        if unsafe { libc::mincore(self.addr, self.len, vec.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(vec)
    }

    pub fn lock(&self) -> std::io::Result<()> {
        // SAFETY: locking our own mapping populates it from the page cache.
        if unsafe { libc::mlock(self.addr, self.len) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads one byte of every `page`, as code using the data would.
    pub fn touch(&self, page: usize) -> u64 {
        let p = self.addr as *const u8;
        let mut sum = 0u64;
        for off in (0..self.len).step_by(page) {
            // SAFETY: within our mapping of a file that is not truncated meanwhile.
            sum = sum.wrapping_add(u64::from(unsafe { std::ptr::read_volatile(p.add(off)) }));
        }
        sum
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: releasing the mapping this value owns; munlock of unlocked pages is a no-op.
        unsafe {
            libc::munlock(self.addr, self.len);
            libc::munmap(self.addr, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Mapping;
    use std::io::Write;

    /// The mincore fallback (kernels before cachestat), exercised on any kernel.
    #[test]
    fn residency_sees_pages_read_and_not_pages_dropped() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f.bin");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![1u8; 64 * 4096]).unwrap();
        f.sync_all().unwrap();
        let file = std::fs::File::open(&path).unwrap();
        crate::pagecache::warm::evict_file(&path).unwrap();
        let map = Mapping::new(&file, 64 * 4096, 0).unwrap();
        let cold = map.residency(4096).unwrap();
        assert_eq!(cold.len(), 64);
        assert!(cold.iter().filter(|b| **b & 1 != 0).count() < 8, "{cold:?}");
        std::fs::read(&path).unwrap();
        let warm = map.residency(4096).unwrap();
        assert!(warm.iter().all(|b| b & 1 != 0), "{warm:?}");
    }
}
