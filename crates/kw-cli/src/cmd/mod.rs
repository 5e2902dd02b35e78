pub mod space;
pub mod wisdom;
