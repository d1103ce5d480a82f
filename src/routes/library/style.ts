/** The library page's one stylesheet (inline, allowed by its hash in the page's CSP). Colours pass WCAG AA contrast. */
export const STYLE = `
:root{font:15px/1.45 system-ui,sans-serif;color:#1b1b1b;background:#fafafa}
body{margin:0}
header{display:flex;gap:16px;align-items:center;padding:10px 20px;background:#1f3a5f;color:#fff}
header h1{font-size:20px;margin:0;flex:1}
header a{color:#fff}
#cms-session{display:none;gap:10px;align-items:center}
#cms-session.on{display:flex}
#cms-error{color:#a00000;padding:0 20px}
#cms-error:empty,.dialog-error:empty{display:none}
.dialog-error{color:#a00000;font-weight:600;margin:6px 0}
[hidden]{display:none!important}
main{padding:12px 20px;max-width:1100px;margin:auto}
section{margin-bottom:18px}
h2{font-size:17px;margin:8px 0}
.bar{display:flex;flex-wrap:wrap;gap:24px;align-items:center}
form,.actions,#drop-zone{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
input,select,button,.button{font:inherit;padding:4px 8px;border:1px solid #6b6b6b;border-radius:4px;background:#fff;color:#1b1b1b}
button,.button{cursor:pointer;background:#e8eef6}
button:disabled{cursor:default;color:#595959;background:#eee}
.danger{background:#fbe9e9;border-color:#a00000;color:#7a0000}
:focus-visible{outline:3px solid #1a66cc;outline-offset:2px}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.visually-hidden:focus-visible+.button{outline:3px solid #1a66cc;outline-offset:2px}
#drop-zone{border:2px dashed #6b6b6b;border-radius:8px;padding:14px;background:#fff}
#drop-zone.over{border-color:#1a66cc;background:#eaf2fc}
#drop-zone p{margin:0}
#uploads,#version-uploads{list-style:none;padding:0;margin:8px 0}
#uploads li,#version-uploads li{display:flex;gap:10px;align-items:center;padding:3px 0}
#uploads progress,#version-uploads progress{width:220px}
meter{width:220px}
table{border-collapse:collapse;width:100%;background:#fff;margin-top:8px}
caption{text-align:left;padding:6px 0;color:#404040}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #ddd}
td button{background:none;border:none;padding:0;color:#1a4f9c;text-decoration:underline}
.pager{display:flex;gap:8px;margin-top:8px}
dialog{width:min(860px,92vw);border:1px solid #6b6b6b;border-radius:8px;padding:16px}
dialog::backdrop{background:rgba(0,0,0,.4)}
.dialog-head{display:flex;justify-content:space-between;align-items:center}
#preview{margin:8px 0;max-height:420px;overflow:auto}
#preview img,#preview video{max-width:100%;max-height:400px}
#preview iframe{width:100%;height:400px;border:1px solid #ddd}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
.actions{margin:8px 0}
#link-output{overflow-wrap:anywhere;font-size:13px}
.hint{font-size:13px;color:#404040;margin:4px 0}
.check{display:inline-flex;gap:4px;align-items:center}
.browse-layout{display:grid;grid-template-columns:minmax(160px,220px) 1fr;gap:16px;align-items:start}
#folders ul{list-style:none;padding-left:14px;margin:2px 0}
#folder-tree{padding-left:0}
#folders li{margin:2px 0}
#folders button{background:none;border:none;padding:1px 4px;color:#1a4f9c;text-align:left}
#folders button[aria-pressed=true]{background:#1f3a5f;color:#fff;border-radius:4px}
#folders .twisty{width:1.6em;color:#1b1b1b}
#active-filters{display:flex;flex-wrap:wrap;gap:6px}
.chip{border-radius:12px;padding:1px 8px;font-size:13px;background:#e8eef6;border:1px solid #6b6b6b}
td .chip{color:#1b1b1b;text-decoration:none;margin:1px 2px;padding:1px 8px}
#view-switch button[aria-pressed=true]{background:#1f3a5f;color:#fff}
#grid{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px}
#grid li{background:#fff;border:1px solid #ddd;border-radius:6px;padding:6px;display:flex;flex-direction:column;gap:4px}
#grid .thumb{display:flex;align-items:center;justify-content:center;height:130px;padding:0;background:#f0f0f0;border:none;overflow:hidden}
#grid .thumb img{max-width:100%;max-height:130px;object-fit:contain}
#grid .thumb img.placeholder{width:100%;height:130px;object-fit:cover}
.type-icon{font:600 15px/1 system-ui,sans-serif;color:#1b1b1b;border:2px solid #6b6b6b;border-radius:6px;padding:14px 10px;background:#fff}
#grid .name{overflow-wrap:anywhere;font-size:13px}
#bulk-results{margin:4px 0;padding-left:18px}
.failed{color:#a00000}
#describe{display:block;margin:10px 0}
#describe fieldset{display:grid;grid-template-columns:max-content 1fr;gap:4px 10px;border:none;padding:0;margin:0}
#describe textarea{font:inherit;padding:4px 8px;border:1px solid #6b6b6b;border-radius:4px}
#d-metadata{font-family:ui-monospace,monospace}
`;
