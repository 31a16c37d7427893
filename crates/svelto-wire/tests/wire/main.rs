//! Integration tests for svelto-wire; modules mirror `src/`.

#![allow(clippy::unwrap_used)] // a failing unwrap is a failing test

mod common;
mod decode;
mod item;
mod response;
mod tuple;
