//! Page-aligned I/O buffers (direct I/O needs 4 KiB alignment of address,
//! length and offset).

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every I/O buffer.
pub const BUFFER_ALIGN: usize = 4096;

/// A zeroed heap buffer aligned to 4 KiB.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// The buffer owns its memory exclusively; moving it between threads is safe.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` bytes (rounded up to 4 KiB), zeroed.
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).div_ceil(BUFFER_ALIGN) * BUFFER_ALIGN;
        let layout = Layout::from_size_align(len, BUFFER_ALIGN).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }

    /// Capacity in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Never empty (kept for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Raw pointer for the engines.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len()) }
    }

    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_rounded() {
        for n in [1, 4096, 5000, 1 << 20] {
            let b = AlignedBuf::new(n);
            assert_eq!(b.as_slice().as_ptr() as usize % BUFFER_ALIGN, 0);
            assert!(b.len() >= n && b.len().is_multiple_of(BUFFER_ALIGN));
        }
    }
}
