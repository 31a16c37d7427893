//! Integration tests of svelto-repos; modules mirror `src/`.

mod replay;
