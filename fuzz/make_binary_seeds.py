"""Writes the binary seeds of fuzz/corpus (xlsx, docx, pdf): `python3 fuzz/make_binary_seeds.py` from
the repository root. Deterministic (fixed timestamps), so a re-run changes nothing."""
import zipfile, zlib, os

def write_zip(path, entries):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)

NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
RNS = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
def xlsx(sheet1, sst):
    types = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
             '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
             '<Default Extension="xml" ContentType="application/xml"/>'
             '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
             '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
             '<Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
             '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
    rels = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
    wb = (f'<?xml version="1.0" encoding="UTF-8"?><workbook {NS} {RNS}><workbookPr/><sheets>'
          '<sheet name="請求" sheetId="1" r:id="rId1"/><sheet name="Data" sheetId="2" r:id="rId2"/></sheets>'
          '<definedNames><definedName name="Rate">Data!$B$1</definedName></definedNames></workbook>')
    wbrels = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
              '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
              '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet2.xml"/>'
              '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>')
    sheet2 = (f'<?xml version="1.0" encoding="UTF-8"?><worksheet {NS}><dimension ref="A1:B2"/><sheetData>'
              '<row r="1"><c r="A1" t="inlineStr"><is><t>rate</t></is></c><c r="B1"><v>0.1</v></c></row>'
              '<row r="2"><c r="A2" t="b"><v>1</v></c><c r="B2" t="e"><v>#N/A</v></c></row></sheetData></worksheet>')
    return [("[Content_Types].xml", types), ("_rels/.rels", rels), ("xl/workbook.xml", wb),
            ("xl/_rels/workbook.xml.rels", wbrels), ("xl/sharedStrings.xml", sst),
            ("xl/worksheets/sheet1.xml", sheet1), ("xl/worksheets/sheet2.xml", sheet2)]

SHEET1 = (f'<?xml version="1.0" encoding="UTF-8"?><worksheet {NS}><dimension ref="A1:D4"/><sheetData>'
          '<row r="1" spans="1:4"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>'
          '<row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2"><v>1200</v></c><c r="C2"><f>B2*Rate</f><v>120</v></c><c r="D2"><f t="shared" ref="D2:D3" si="0">B2+C2</f><v>1320</v></c></row>'
          '<row r="3"><c r="A3" t="inlineStr"><is><t>交通費</t></is></c><c r="B3"><v>45382</v></c><c r="C3"><f>SUM(B:B)</f><v>0</v></c><c r="D3"><f t="shared" si="0"/><v>0</v></c></row>'
          '<row r="4"><c r="A4"><f t="array" ref="A4:B4">B2:C2*2</f><v>2400</v></c><c r="B4"><v>240</v></c></row>'
          '</sheetData><mergeCells count="1"><mergeCell ref="C4:D4"/></mergeCells></worksheet>')
SST = (f'<?xml version="1.0" encoding="UTF-8"?><sst {NS} count="4" uniqueCount="4">'
       '<si><t>品目</t></si><si><t>金額</t></si><si><r><t>税</t></r><r><t>込</t></r></si><si><t xml:space="preserve"> 消耗品 </t></si></sst>')

os.makedirs('fuzz/corpus/xlsx', exist_ok=True)
write_zip('fuzz/corpus/xlsx/invoice.xlsx', xlsx(SHEET1, SST))
write_zip('fuzz/corpus/xlsx/unique-count-2147483647.xlsx',
          xlsx(SHEET1, SST.replace('uniqueCount="4"', 'uniqueCount="2147483647"')))
write_zip('fuzz/corpus/xlsx/calamine-overflow-dimension.xlsx',
          xlsx(SHEET1.replace('<dimension ref="A1:D4"/>', '<dimension ref="A1:D99999999999"/>'), SST))
# An end tag that closes nothing it names: calamine's reader reads on (no end-name check).
write_zip('fuzz/corpus/xlsx/calamine-overflow-after-stray-end-tag.xlsx',
          xlsx(SHEET1.replace('<dimension ref="A1:D4"/>', '<x></y><dimension ref="A1:D99999999999"/>'), SST))
# A first <sst> in text before the real one: calamine reserves by the first it meets.
write_zip('fuzz/corpus/xlsx/unique-count-in-a-first-sst.xlsx',
          xlsx(SHEET1, SST.replace('<?xml', '\x0f?xml <sst uniqueCount="2147483647">', 1)))
# The worksheet under a name that does not end in .xml: calamine follows the relationship.
write_zip('fuzz/corpus/xlsx/calamine-overflow-sheet-not-named-xml.xlsx',
          [(n.replace('sheet1.xml', 'sheet1.dat'), d.replace('sheet1.xml', 'sheet1.dat'))
           for n, d in xlsx(SHEET1.replace('<dimension ref="A1:D4"/>', '<dimension ref="A1:D99999999999"/>'), SST)])

# docx
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
doc = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {W}><w:body>'
       '<w:p><w:r><w:t>請求書</w:t></w:r></w:p>'
       '<w:p><w:r><w:t xml:space="preserve">Total: </w:t></w:r><w:r><w:tab/><w:t>1,200</w:t></w:r></w:p>'
       '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>品目</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>金額</w:t></w:r></w:p></w:tc></w:tr>'
       '<w:tr><w:tc><w:p><w:r><w:t>交通費</w:t></w:r></w:p></w:tc><w:tc><w:p><w:del><w:r><w:delText>9</w:delText></w:r></w:del><w:r><w:t>450</w:t></w:r></w:p></w:tc></w:tr></w:tbl>'
       '<w:sectPr/></w:body></w:document>')
os.makedirs('fuzz/corpus/docx', exist_ok=True)
write_zip('fuzz/corpus/docx/invoice.docx', [
    ("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'),
    ("_rels/.rels", '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
    ("word/document.xml", doc)])

# pdf: one page with an uncompressed and a compressed content stream
def pdf(objs, root=1):
    out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs)+1}\n0000000000 65535 f \n".encode()
    for o in offsets:
        out += f"{o:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs)+1} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out
def stream(data, extra=b"", compress=False):
    if compress:
        data = zlib.compress(data); extra += b" /Filter /FlateDecode"
    return b"<< /Length " + str(len(data)).encode() + extra + b" >>\nstream\n" + data + b"\nendstream"
content1 = b"BT /F1 12 Tf 72 720 Td (Invoice No. 42) Tj 0 -14 Td [(Total) -250 (1,200)] TJ ET"
content2 = b"BT /F1 10 Tf 72 600 Td (second page \\(draft\\)) Tj T* (line 2) ' ET"
objs = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 7 0 R >> >> >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R /Resources << /Font << /F1 7 0 R >> >> >>",
    stream(content1),
    stream(content2, compress=True),
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
]
os.makedirs('fuzz/corpus/pdf', exist_ok=True)
open('fuzz/corpus/pdf/two-pages.pdf', 'wb').write(pdf(objs))
