use std::io;

pub use svelto_fs::{Corruption, Result, StoreError};

pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> StoreError {
    let context = context.into();
    move |err| StoreError::Io { context, err }
}
