//! IO buffers aligned for O_DIRECT (4 KiB covers every logical block size in use).

use crate::error::{Error, Result};
use std::alloc::{Layout, alloc_zeroed, dealloc};

pub use crate::scenario::limits::ALIGN;

/// A heap buffer aligned to [`ALIGN`]; its address is stable, so the kernel may hold it
/// for an in-flight IO.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is plain memory owned by one worker thread at a time.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (rounded up to [`ALIGN`]). The size comes from the
    /// scenario (block size x depth), so running out of memory is an error the run
    /// reports, not an abort: `scenario::budget` refuses what will not fit before the
    /// run, this is for what it could not foresee (other processes taking memory).
    pub fn new(len: usize) -> Result<AlignedBuf> {
        let no_memory = || Error::failed(format!("cannot allocate {len} bytes of IO buffers: out of memory"));
        let size = len.max(1).checked_next_multiple_of(ALIGN).ok_or_else(no_memory)?;
        let layout = Layout::from_size_align(size, ALIGN).map_err(|_| no_memory())?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(no_memory());
        }
        Ok(AlignedBuf { ptr, layout })
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes and uniquely borrowed here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        let err = AlignedBuf::new(usize::MAX - 1).err().expect("refused");
        assert!(err.to_string().contains("out of memory"), "{err}");
        // more than any address space holds, but a valid layout: the allocator says no
        assert!(AlignedBuf::new(1 << 62).is_err());
        let mut b = AlignedBuf::new(5000).unwrap();
        assert_eq!(b.len(), 8192);
        assert!(b.as_mut_slice().iter().all(|&x| x == 0));
    }
}
