//! The buffers handed to the writer.

use std::sync::Arc;

/// Bytes of one buffer, owned by the capture job (moved in, never copied by the writer).
#[derive(Debug, Clone)]
pub enum BufferData {
    /// A plain host allocation, e.g. the target of a device-to-host copy.
    Vec(Vec<u8>),
    /// Shared bytes (several captures may hold the same host copy).
    Arc(Arc<[u8]>),
}

impl AsRef<[u8]> for BufferData {
    fn as_ref(&self) -> &[u8] {
        match self {
            BufferData::Vec(v) => v,
            BufferData::Arc(a) => a,
        }
    }
}

impl From<Vec<u8>> for BufferData {
    fn from(v: Vec<u8>) -> Self {
        BufferData::Vec(v)
    }
}

impl From<Arc<[u8]>> for BufferData {
    fn from(a: Arc<[u8]>) -> Self {
        BufferData::Arc(a)
    }
}

impl From<&[u8]> for BufferData {
    fn from(s: &[u8]) -> Self {
        BufferData::Vec(s.to_vec())
    }
}

/// One named buffer of a capture.
#[derive(Debug, Clone)]
pub struct CaptureBuffer {
    /// Unique name within the capture, e.g. `arg0`, `c.before`, `c.after`.
    pub name: String,
    /// Element type, e.g. `f32` (free text, stored for readers).
    pub elem_type: String,
    /// The raw bytes.
    pub data: BufferData,
}

impl CaptureBuffer {
    /// A buffer named `name` of elements of type `elem_type`.
    pub fn new(
        name: impl Into<String>,
        elem_type: impl Into<String>,
        data: impl Into<BufferData>,
    ) -> Self {
        CaptureBuffer {
            name: name.into(),
            elem_type: elem_type.into(),
            data: data.into(),
        }
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }
}
