"""Field names of the sira-seek index layout (see mappings/), shared by every algorithm."""

TITLE = "title"
TEXT = "text"
SOURCE_FIELDS = (TITLE, TEXT)
CONTENTS = "contents"  # title + text, copied at index time; what BM25 searches
CONTENTS_SHINGLES = "contents.shingles"
PHRASES = "sira_enrichment.phrases"
PHRASE_SHINGLES = "sira_enrichment.phrases.shingles"
CATEGORIES = "sira_enrichment.categories"
CATEGORY_WORDS = "sira_enrichment.categories.words"
SYNC = "sira_sync"
VECTOR = "embedding"  # the dense vector of title + text (ingest --embed, sira-sync --embed)

# Multi-fields analyse their parent's text: artificial documents must set the parent.
SUBFIELD_PARENT = {
    CONTENTS_SHINGLES: CONTENTS,
    PHRASE_SHINGLES: PHRASES,
    CATEGORY_WORDS: CATEGORIES,
}
