"""The page's CSS (Gradio 6 takes it at launch)."""

CSS = """
#grid_feed{display:none!important}
/* Gradio clips its container with overflow:hidden, which makes it a scroll container that never
   scrolls, so nothing inside can stick; clip cuts the same overflow without that. */
.gradio-container{overflow:clip!important}
#action_bar{position:sticky;top:0;z-index:40;background:var(--background-fill-primary);padding:6px 0;margin:0;border-bottom:1px solid var(--border-color-primary);align-items:center;gap:8px;flex-wrap:wrap}
#action_bar>button,#action_bar #run,#action_bar #stop{flex:0 0 auto;min-width:90px}
#action_bar #progress{flex:1 1 260px;min-width:0}
#progress .progress-box{min-height:2.2em;display:flex;flex-wrap:wrap;align-items:center;gap:2px 8px}
#progress .progress-box[data-state="refused"] .prog-status{color:#991b1b;font-weight:600}
#progress .progress-box>div{flex-basis:100%}
/* The grid scrolls in its own box, no taller than the screen under the action bar, so its
   sticky column headers (and the sticky prompt column, sideways) stay in view while it scrolls. */
#grid .grid-wrap{overflow:auto;max-height:max(320px,calc(100vh - 120px));overscroll-behavior:contain;scroll-margin-top:80px}
#grid table.grid{border-collapse:collapse;width:100%;table-layout:fixed;font-size:13px}
#grid th,#grid td{border:1px solid var(--border-color-primary);vertical-align:top;padding:6px;text-align:left}
#grid thead th{position:sticky;top:0;background:var(--background-fill-secondary);z-index:2;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
/* A model's whole name, on two or three lines in a narrow column (it breaks after - / . : only). */
#grid thead th.model-col{white-space:normal;overflow-wrap:anywhere;text-overflow:clip;line-height:1.25;vertical-align:bottom}
#grid th.prompt{font-weight:normal;background:var(--background-fill-secondary);position:sticky;left:0;z-index:1}
#grid thead th.prompt-col{left:0;z-index:3}
#grid .cat{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:var(--neutral-200);color:var(--neutral-800);margin-right:6px}
#grid .rid{font-size:11px;color:var(--body-text-color-subdued);white-space:nowrap}
#grid .ptext,#grid .resp,#grid .msg{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;unicode-bidi:isolate}
#grid .ptext{max-height:13em;overflow-y:auto}
#grid td.cell{position:relative}
#grid .cell-head{display:flex;align-items:center;white-space:nowrap;min-height:1.5em;min-width:0}
#grid .cell-head .vsrc{overflow:hidden;text-overflow:ellipsis;min-width:0}
#grid .cell-head .verdict{flex:none}
#grid button.open{flex:none;margin-left:auto;font:inherit;font-size:13px;line-height:1;padding:2px 5px;border:1px solid var(--border-color-primary);border-radius:4px;background:var(--background-fill-primary);color:var(--body-text-color);cursor:pointer}
#grid button.open:focus-visible{outline:2px solid #2563eb;outline-offset:1px}
/* contain: text arriving in one answer lays out that answer's box, not the whole table; and a box
   out of sight is neither laid out nor painted until it comes into view (120 answers stream at once). */
#grid .body{height:12em;overflow-y:auto;margin-top:4px;overscroll-behavior:contain;contain:strict;content-visibility:auto}
#grid .meta{font-size:11px;line-height:1.3;min-height:2.6em;max-height:2.6em;overflow:hidden;color:var(--body-text-color-subdued);margin-top:2px}
#grid .cached{font-weight:600;color:#0e7490}
#grid .more{color:var(--body-text-color-subdued);font-style:italic}
#grid .thoughts{margin:0 0 4px;font-size:12px;color:var(--body-text-color-subdued)}
#grid .thoughts summary{cursor:pointer;font-style:italic}
#grid .thoughts .think{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;unicode-bidi:isolate;opacity:.8;border-left:2px solid var(--border-color-primary);padding-left:6px;max-height:10em;overflow-y:auto}
#grid .msg{font-size:12px}
#grid .msg:empty{display:none}
#grid .msg-err{color:#b91c1c}#grid .msg-retry{color:#b45309}#grid .msg-stop{color:#6b7280}
#grid [data-state="stopped"] .resp{color:var(--body-text-color-subdued)}
.verdict{display:inline-block;font:inherit;font-size:12px;font-weight:600;line-height:1.4;padding:1px 8px;margin:0;border:0;border-radius:10px;background:#e5e7eb;color:#374151;cursor:default}
.verdict:disabled{opacity:1;color:#374151}
.verdict:focus-visible,#grid button.ov:focus-visible,#grid .body:focus-visible,#grid .grid-wrap:focus-visible{outline:2px solid #2563eb;outline-offset:1px}
.verdict.v-direct_answer{background:#dcfce7;color:#166534}
.verdict.v-direct_refusal{background:#fee2e2;color:#991b1b}
.verdict.v-indirect_refusal{background:#fef3c7;color:#92400e}
.verdict.v-error,.verdict.v-error:disabled{background:#f3f4f6;color:#4b5563}
.verdict[data-provisional]{font-style:italic;box-shadow:inset 0 0 0 1px currentColor}
.verdict.unsure,.verdict.unsure:disabled{background:#fff;border:1px dashed currentColor;padding:0 7px}
#scoreboard_head{align-items:center;gap:8px}
#review_panel:not(:has(.rq)){display:none!important}
#review_panel .rq{border:2px solid #1d4ed8;border-radius:8px;padding:10px 14px;margin:6px 0;background:var(--background-fill-primary)}
#review_panel .rq:focus{outline:3px solid #1d4ed8;outline-offset:2px}
#review_panel .rq p{margin:4px 0}
#review_panel .rq-status{font-size:13px;color:var(--body-text-color-subdued)}
#review_panel .rq-label{font-size:12px;font-weight:600;margin-top:8px;color:var(--body-text-color-subdued)}
#review_panel .rq-prompt,#review_panel .rq-answer{font-size:18px;line-height:1.45;white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate;max-height:12em;overflow-y:auto}
#review_panel .rq-keys{display:flex;flex-wrap:wrap;gap:6px;margin-top:10px}
#review_panel .rq-keys button{font:inherit;font-size:14px;padding:4px 10px;border:1px solid #374151;border-radius:6px;background:#fff;color:#111827;cursor:pointer}
#review_panel .rq-keys button:focus-visible{outline:2px solid #1d4ed8;outline-offset:1px}
#review_panel kbd{font-family:ui-monospace,monospace;font-weight:700;border:1px solid #6b7280;border-radius:4px;padding:0 5px;margin-right:4px;background:#f3f4f6;color:#111827}
#review_panel .rq-why{font-size:12px;color:var(--body-text-color-subdued)}
#scoreboard .sb .naive{color:var(--body-text-color-subdued)}
#grid .verdict.ovr{cursor:pointer}
#grid .verdict.ovr::after{content:" ▾"}
#grid .ov-menu{position:absolute;z-index:3;left:6px;right:6px;margin-top:2px;padding:4px;border:1px solid var(--border-color-primary);border-radius:6px;background:var(--background-fill-primary);box-shadow:0 2px 8px rgba(0,0,0,.15)}
#grid .ov-hint{display:block;font-size:11px;color:var(--body-text-color-subdued)}
#grid button.ov{font-size:12px;margin:2px;padding:1px 6px;border:1px solid var(--border-color-primary);border-radius:6px;background:var(--background-fill-secondary);cursor:pointer}
#grid button.ov-on{font-weight:700}
#grid .vsrc{font-size:11px;color:var(--body-text-color-subdued);margin-left:6px}
#grid .msg-info{color:var(--body-text-color);font-style:italic}#grid .msg-judge{color:#92400e}
#grid .msg-settle{color:#1e40af}#grid .msg .finish{font-size:11px;padding:0 6px;margin-left:4px;border:1px solid #1e40af;border-radius:4px;background:#fff;color:#1e40af;cursor:pointer}
#grid .msg .finish:disabled{opacity:.5;cursor:default}
#scoreboard .sb-settle{font-size:13px;margin:6px 0;padding:6px 8px;border-left:3px solid #1e40af;background:var(--background-fill-secondary)}
#grid .grid-empty,.sb-empty{color:var(--body-text-color-subdued);padding:12px}
#progress .progress-box progress{width:220px;vertical-align:middle;margin-right:8px;accent-color:#16a34a}
#progress .progress-box[data-state="stopped"] progress{accent-color:#9ca3af}
#progress .progress-box[data-state="stopped"] .prog-text{color:#92400e;font-weight:600}
#progress .prog-status{color:#b45309}
#progress .prog-note{font-size:12px;color:var(--body-text-color-subdued)}
#scoreboard,#plot{min-width:0;max-width:100%}
#scoreboard .scoreboard-inner{max-width:100%}
#scoreboard .sb-wrap,#scoreboard .heat-wrap{overflow-x:auto;max-width:100%}
#scoreboard table{border-collapse:collapse;font-size:13px;margin-bottom:8px}
#scoreboard th,#scoreboard td{border:1px solid var(--border-color-primary);padding:4px 8px;text-align:left;overflow-wrap:break-word}
#scoreboard .ci,#scoreboard .cnt{font-size:11px;color:var(--body-text-color-subdued)}
#scoreboard .basis{display:inline-block;font-size:11px;padding:0 5px;border-radius:6px;background:#e0e7ff;color:#3730a3}
#scoreboard table.heat{table-layout:fixed;width:100%;min-width:600px;font-size:12px}
#scoreboard b{white-space:nowrap}
#scoreboard .heat col.c-model{width:22%}
#scoreboard .heat col.c-split{width:58px}
#scoreboard .heat th,#scoreboard .heat td{padding:3px 4px}
#scoreboard .heat td{text-align:center}
#scoreboard .heat tbody th{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;overflow-wrap:normal}
#scoreboard .heat th.cat{vertical-align:bottom;text-align:center;font-size:11px}
#scoreboard .heat th.cat span{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;display:inline-block;max-height:88px;overflow:hidden;text-overflow:ellipsis}
#scoreboard .heat .pct,#scoreboard .heat .cnt{display:block;white-space:nowrap}
#scoreboard .heat .pct{font-weight:600}
#scoreboard .heat td[style] .pct,#scoreboard .heat td[style] .cnt{color:inherit}
#scoreboard .heat-title{font-weight:600;margin:6px 0 4px}
#scoreboard .sb-foot{font-size:12px;color:var(--body-text-color-subdued)}
#plot svg.orplot{width:100%;max-width:620px;height:auto;font-size:11px}
#plot .gridline{stroke:var(--border-color-primary);stroke-width:1}
#plot .tick,#plot .axis{fill:var(--body-text-color-subdued)}
#plot .axis{font-size:12px}
#plot .paper-pt{fill:#9ca3af;fill-opacity:.7}
#plot .session-pt circle{stroke:#fff;stroke-width:1.5}
#plot .session-pt .ebar{stroke-width:2}
#plot .session-pt .only{stroke-width:2;stroke-dasharray:6 4}
#plot .band{fill-opacity:.12}
#plot .paper .paper-name{visibility:hidden;fill:var(--body-text-color);font-size:11px;paint-order:stroke;stroke:var(--background-fill-primary);stroke-width:3px}
#plot .paper:hover .paper-name,#plot .paper:focus .paper-name{visibility:visible}
#plot .paper:focus{outline:none}#plot .paper:focus .paper-pt{stroke:#1d4ed8;stroke-width:2;fill-opacity:1}
#plot .session-pt .pt-label{font-weight:600}
#plot .legend{font-size:12px;overflow-wrap:break-word}#plot .lg.paper{color:#6b7280}
#plot .lg-item{margin-right:10px}
#plot .session-pt .leader{stroke-width:1;stroke-opacity:.6}
#plot .caption{font-size:11px;color:var(--body-text-color-subdued)}
#grid .cell-rep .rep{border-top:1px dashed var(--border-color-primary);padding-top:3px;margin-top:3px}
#grid .cell-rep .rep-n{font-size:11px;font-weight:700;color:var(--body-text-color-subdued);margin-right:4px;float:left}
#grid .cell-rep .body{height:6em}
#grid tr.gf-out{display:none}
#grid .gf-none{padding:12px;color:var(--body-text-color-subdued)}
#grid_filter .gf-bar{display:flex;flex-wrap:wrap;align-items:center;gap:4px 6px;font-size:13px}
#grid_filter .gf-label{font-weight:600;margin-right:2px}
#grid_filter button.gf{font:inherit;font-size:13px;padding:2px 10px;border:1px solid var(--border-color-primary);border-radius:12px;background:var(--background-fill-primary);color:var(--body-text-color);cursor:pointer}
#grid_filter button.gf[aria-pressed="true"]{background:#1e3a8a;border-color:#1e3a8a;color:#fff}
#grid_filter button.gf:focus-visible{outline:2px solid #2563eb;outline-offset:1px}
#grid_filter button.gf .gf-n{color:inherit;font-variant-numeric:tabular-nums}
#grid_filter .gf-shown{color:var(--body-text-color-subdued);margin-left:4px}
dialog.cell-dialog{width:min(62em,94vw);max-height:88vh;padding:0;border:1px solid var(--border-color-primary);border-radius:8px;background:var(--background-fill-primary);color:var(--body-text-color)}
dialog.cell-dialog::backdrop{background:rgba(0,0,0,.45)}
dialog.cell-dialog .cd-head{display:flex;align-items:flex-start;gap:8px;padding:10px 14px;border-bottom:1px solid var(--border-color-primary)}
dialog.cell-dialog .cd-head h2{font-size:16px;margin:0;flex:1;overflow-wrap:anywhere}
dialog.cell-dialog .cd-close{font:inherit;font-size:14px;padding:2px 10px;border:1px solid #374151;border-radius:6px;background:#fff;color:#111827;cursor:pointer}
dialog.cell-dialog .cd-body{padding:10px 14px;max-height:calc(88vh - 60px);overflow-y:auto}
dialog.cell-dialog .cd-prompt{font-style:italic;color:var(--body-text-color-subdued);white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate;margin:0 0 8px}
dialog.cell-dialog .cd-verdict{font-size:13px;margin:0 0 8px}
dialog.cell-dialog .cd-text{font-size:15px;line-height:1.5;white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}
dialog.cell-dialog .cd-think{font-size:13px;color:var(--body-text-color-subdued);white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate;margin-bottom:8px}
dialog.cell-dialog .cd-meta{font-size:12px;color:var(--body-text-color-subdued);margin-top:8px}
.skip-link{position:absolute;left:8px;top:-60px;z-index:100;padding:6px 12px;border-radius:6px;background:#1e3a8a;color:#fff!important;font-weight:600}
.skip-link:focus{top:8px}
#run_size{flex:1 1 100%;min-width:0}
#run_size .run-size{font-size:12px;color:var(--body-text-color-subdued)}
#run_size .run-size[data-over]{color:#991b1b;font-weight:600}
#grid .cell-rep .rep{position:relative}
#grid .stab{display:inline-block;font-size:12px;font-weight:700;padding:1px 8px;border-radius:10px;background:#e0e7ff;color:#3730a3}
#grid .stab.stab-flip{background:#fde68a;color:#78350f}
#scoreboard td.flip{background:rgba(253,230,138,.25)}
#scoreboard table.sb thead th{overflow-wrap:normal}
#comparison .cmp-empty{color:var(--body-text-color-subdued);padding:8px}
#comparison .cmp-names{font-weight:600;margin-bottom:4px}
#comparison .cmp-tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:6px;background:var(--neutral-200);color:var(--neutral-800)}
#comparison .cmp-sentence{font-size:15px;font-weight:600;margin:4px 0}
#comparison .cmp-note,#comparison .cmp-foot,#comparison .cmp-caption{font-size:12px;color:var(--body-text-color-subdued);margin:2px 0}
#comparison table{border-collapse:collapse;font-size:13px;margin:6px 0}
#comparison th,#comparison td{border:1px solid var(--border-color-primary);padding:4px 8px;text-align:left;vertical-align:top}
#comparison .cnt{font-size:11px;color:var(--body-text-color-subdued)}
#comparison .sig-yes{font-weight:700;color:#991b1b}
#comparison .cmp-wrap{max-height:70vh;overflow:auto}
#comparison table.cmp-diff{width:100%;table-layout:fixed}
#comparison table.cmp-diff th:first-child{width:32px}
#comparison table.cmp-diff .cmp-prompt{width:30%}
#comparison tr.cmp-disagree td{background:rgba(254,243,199,.45)}
#comparison .cat{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:var(--neutral-200);color:var(--neutral-800);margin-right:6px}
#comparison .rid{font-size:11px;color:var(--body-text-color-subdued)}
#comparison .ptext,#comparison .resp{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}
#comparison .resp{max-height:10em;overflow-y:auto;margin-top:3px}
#comparison .cv{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;background:#e5e7eb;color:#374151}
#comparison .cv-answer{background:#dcfce7;color:#166534}
#comparison .cv-refusal{background:#fee2e2;color:#991b1b}
#comparison .cv-split{background:#fde68a;color:#78350f}
#gen_hint{font-size:12px;color:#b45309}
#grid .fu{display:flex;flex-wrap:wrap;gap:3px;margin-top:6px;font-size:12px}
#grid .fu select,#grid .fu input{min-width:0;flex:1 1 100%;font-size:12px;padding:1px 3px;border:1px solid var(--border-color-primary);border-radius:4px;background:var(--background-fill-primary)}
#grid .fu-send{font-size:12px;padding:1px 8px;border-radius:4px;border:1px solid var(--border-color-primary);background:var(--background-fill-secondary);cursor:pointer}
#grid .turns{margin:0 0 4px;font-size:12px;color:var(--body-text-color-subdued)}
#grid .turns summary{cursor:pointer;font-style:italic}
#grid .turn{border-left:2px solid var(--border-color-primary);padding-left:4px;margin:3px 0}
#grid .turn-resp{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}
#grid .turn-verdict{font-size:11px;font-weight:600}
#grid .said{font-size:12px;font-style:italic;margin:0 0 3px;white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}
/* A phone: a narrower prompt column, so the first model's column shows whole beside it; and an
   action bar that stays in view only while a run streams, then as one short row (Run, Stop and the
   count), so it never takes a fifth of the screen; the rest of the line shows once the run ends. */
@media (max-width:640px){
#grid col.prompt-col,#grid th.prompt-col{width:110px!important}
#grid table.grid{min-width:calc(110px + var(--models,1) * 150px)!important}
#action_bar{position:static;gap:6px}
#action_bar>button,#action_bar #run,#action_bar #stop{min-width:64px!important}
#action_bar:has(.progress-box[data-state="running"]){position:sticky;flex-wrap:nowrap;padding:4px 0}
#action_bar:has(.progress-box[data-state="running"]) #progress{flex:1 1 0}
#action_bar:has(.progress-box[data-state="running"]) :is(#run_size,progress,.prog-note){display:none}
#action_bar:has(.progress-box[data-state="running"]) .progress-box{min-height:0;max-height:2.6em;overflow:hidden;font-size:12px;line-height:1.3}
#grid .grid-wrap{scroll-margin-top:8px}
}
"""
