"""Which notebooks are graded, under which ids, and how each is read: finding them under the
PATHs (``find``), walking a folder without following a link (``folder_tree``), a student id
parsed once from a name (``ids``), and the streamed, bounded notebook reader (``reading``)."""
