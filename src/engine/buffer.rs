//! IO buffers aligned for O_DIRECT (4 KiB covers every logical block size in use).

use std::alloc::{Layout, alloc_zeroed, dealloc};

pub const ALIGN: usize = 4096;

/// A heap buffer aligned to [`ALIGN`]; its address is stable, so the kernel may hold it
/// for an in-flight IO.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// The buffer is plain memory owned by one worker thread at a time.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1).next_multiple_of(ALIGN), ALIGN).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
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
