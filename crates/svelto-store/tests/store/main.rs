//! Integration tests of the storage engine: transactions against a model, node identity
//! and history, and crash recovery with torn or garbage tails.

mod common;
mod crash;
mod dirs;
mod history;
mod hotcopy;
mod model;
mod open;
mod seam;
mod staged;
