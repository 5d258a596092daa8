/*
 * TEST-ONLY analysis shim for sira-seek's secured local Elasticsearch node.
 *
 * Why it exists: the only Elasticsearch we can run without Docker is the official
 * integ-test-zip archive, which ships without the analysis-common module. Minting an API key
 * makes Elasticsearch create its `.security` index, whose settings define an `email` analyzer
 * built from three analysis-common components (`uax_url_email` tokenizer, `pattern_capture`
 * and `unique` token filters); without them the index cannot be created and no API key can
 * be minted. Real clusters ship analysis-common and never need this.
 *
 * What it is: exactly those three components, each a thin wrapper over Lucene's own classes
 * (UAX29URLEmailTokenizer, PatternCaptureGroupTokenFilter) and, for `unique`, a few lines
 * with the semantics of analysis-common's filter. It is compiled with javac against the jars
 * in the distribution's lib/ when the secured node's home is prepared
 * (esplugin/analysis_shim.py) and installed on that node only. It does nothing privileged,
 * so it needs no entitlement policy.
 */
package org.siraseek.analysisshim;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.email.UAX29URLEmailTokenizer;
import org.apache.lucene.analysis.pattern.PatternCaptureGroupTokenFilter;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.elasticsearch.index.analysis.AbstractTokenFilterFactory;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.index.analysis.TokenizerFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;

public final class AnalysisShimPlugin extends Plugin implements AnalysisPlugin {

    @Override
    public Map<String, AnalysisProvider<TokenizerFactory>> getTokenizers() {
        return Map.of("uax_url_email", (indexSettings, env, name, settings) -> {
            int maxTokenLength =
                settings.getAsInt("max_token_length", StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH);
            return TokenizerFactory.newFactory(name, () -> {
                UAX29URLEmailTokenizer tokenizer = new UAX29URLEmailTokenizer();
                tokenizer.setMaxTokenLength(maxTokenLength);
                return tokenizer;
            });
        });
    }

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        AnalysisProvider<TokenFilterFactory> patternCapture = (indexSettings, env, name, settings) -> {
            List<String> regexes = settings.getAsList("patterns");
            if (regexes.isEmpty()) {
                throw new IllegalArgumentException("required setting 'patterns' is missing for [" + name + "]");
            }
            Pattern[] patterns = regexes.stream().map(Pattern::compile).toArray(Pattern[]::new);
            boolean preserveOriginal = settings.getAsBoolean("preserve_original", true);
            return new AbstractTokenFilterFactory(name) {
                @Override
                public TokenStream create(TokenStream in) {
                    return new PatternCaptureGroupTokenFilter(in, preserveOriginal, patterns);
                }
            };
        };
        AnalysisProvider<TokenFilterFactory> unique = (indexSettings, env, name, settings) -> {
            boolean onlyOnSamePosition = settings.getAsBoolean("only_on_same_position", false);
            return new AbstractTokenFilterFactory(name) {
                @Override
                public TokenStream create(TokenStream in) {
                    return new UniqueFilter(in, onlyOnSamePosition);
                }
            };
        };
        return Map.of(
            "pattern_capture", AnalysisPlugin.requiresAnalysisSettings(patternCapture),
            "unique", unique
        );
    }

    /** Drops a token whose term was already seen (in the stream, or at the same position). */
    static final class UniqueFilter extends TokenFilter {
        private final CharTermAttribute term = addAttribute(CharTermAttribute.class);
        private final PositionIncrementAttribute posInc = addAttribute(PositionIncrementAttribute.class);
        private final CharArraySet seen = new CharArraySet(8, false);
        private final boolean onlyOnSamePosition;

        UniqueFilter(TokenStream in, boolean onlyOnSamePosition) {
            super(in);
            this.onlyOnSamePosition = onlyOnSamePosition;
        }

        @Override
        public boolean incrementToken() throws IOException {
            while (input.incrementToken()) {
                if (onlyOnSamePosition && posInc.getPositionIncrement() > 0) {
                    seen.clear();
                }
                if (!seen.contains(term.buffer(), 0, term.length())) {
                    seen.add(Arrays.copyOf(term.buffer(), term.length()));
                    return true;
                }
            }
            return false;
        }

        @Override
        public void reset() throws IOException {
            super.reset();
            seen.clear();
        }
    }
}
