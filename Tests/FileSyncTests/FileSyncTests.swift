// Tests of FileSync.
